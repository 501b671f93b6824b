import assert from 'node:assert/strict';
import { test } from 'vitest';
import { Http1Reader, MAX_HEAD_BYTES, type Http1Response } from './http1-reader.js';

const ok = (body: string, headers = '') => `HTTP/1.1 200 OK\r\ncontent-type: application/dns-message\r\n${headers}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** Feeds `text` in pieces of `step` bytes and returns every response it completed, with the pushes that completed them. */
function feed(text: string | Buffer, step: number, maxBody = 65535): Array<{ at: number; r: Http1Response }> {
  const reader = new Http1Reader(maxBody);
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text, 'latin1');
  const out: Array<{ at: number; r: Http1Response }> = [];
  for (let i = 0; i < bytes.length; i += step) {
    const r = reader.push(bytes.subarray(i, i + step));
    if (r) out.push({ at: Math.min(i + step, bytes.length), r });
  }
  return out;
}

test('a response is complete the moment its last byte is in, whatever the pieces', () => {
  const text = ok('abcdef');
  for (const step of [1, 2, 7, text.length]) {
    const got = feed(text, step);
    assert.equal(got.length, 1, `step ${step}`);
    assert.equal(got[0]!.at, text.length, `step ${step}: completed by the last byte, not before`);
    assert.equal(got[0]!.r.status, 200);
    assert.equal(got[0]!.r.body.toString(), 'abcdef');
    assert.equal(got[0]!.r.headers.get('content-type'), 'application/dns-message');
    assert.equal(got[0]!.r.close, false);
  }
});

test('several responses on one connection, one after another; bytes of the next are kept', () => {
  const got = feed(ok('one') + ok('two!') + ok(''), 5);
  assert.deepEqual(got.map((g) => g.r.body.toString()), ['one', 'two!', '']);
});

test('chunked bodies (with extensions and trailers), 1xx interim responses, 204 and 304 without a body', () => {
  const chunked = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: application/dns-message\r\n\r\n3;x=y\r\nabc\r\n0A\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\n';
  for (const step of [1, 3, chunked.length]) assert.equal(feed(chunked, step)[0]?.r.body.toString(), 'abc0123456789', `step ${step}`);
  const interim = `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </x>\r\n\r\n${ok('body')}`;
  const got = feed(interim, 4);
  assert.equal(got.length, 1);
  assert.equal(got[0]!.r.status, 200);
  assert.equal(got[0]!.r.body.toString(), 'body');
  const empty = feed('HTTP/1.1 204 No Content\r\ncontent-length: 10\r\n\r\n' + ok('x'), 100);
  assert.deepEqual(empty.map((g) => [g.r.status, g.r.body.length]), [[204, 0], [200, 1]]);
});

test('Connection: close, HTTP/1.0 and a close-delimited body', () => {
  assert.equal(feed(ok('a', 'connection: close\r\n'), 100)[0]!.r.close, true);
  assert.equal(feed('HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\na', 100)[0]!.r.close, true);
  assert.equal(feed('HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 1\r\n\r\na', 100)[0]!.r.close, false);
  const reader = new Http1Reader(100);
  assert.equal(reader.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-type: application/dns-message\r\n\r\nab')), null);
  assert.equal(reader.push(Buffer.from('cd')), null);
  const r = reader.end()!;
  assert.equal(r.body.toString(), 'abcd');
  assert.equal(r.close, true);
  assert.equal(new Http1Reader(100).end(), null, 'nothing under way: no response');
});

test('a response cut by the close is connection-closed; anything unreadable is malformed-answer', () => {
  const cut = new Http1Reader(100);
  cut.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
  assert.throws(() => cut.end(), { code: 'connection-closed', message: /mid-answer \(3 bytes/ });
  const bad: Array<[string, RegExp]> = [
    ['HTTP/2 200 OK\r\n\r\n', /bad status line/],
    ['HTTP/1.1 20 OK\r\n\r\n', /bad status line/],
    ['ICY 200 OK\r\n\r\n', /bad status line/],
    ['HTTP/1.1 200 OK\r\nbad header\r\n\r\n', /bad header line/],
    ['HTTP/1.1 200 OK\r\nname : value\r\n\r\n', /bad header line/],
    ['HTTP/1.1 200 OK\r\nx: 1\r\n folded\r\n\r\n', /bad header line/],
    ['HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /bad Content-Length/],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n', /bad Content-Length/],
    ['HTTP/1.1 200 OK\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n', /both Transfer-Encoding and Content-Length/],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n', /does not end in chunked/],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/],
    ['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\naXY', /not followed by CRLF/],
    ['HTTP/1.1 101 Switching Protocols\r\n\r\n', /101/],
    [`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(MAX_HEAD_BYTES)}`, /no end of the header block/],
    ['HTTP/1.1 200 OK\r\ncontent-length: 101\r\n\r\n' + 'a'.repeat(101), /body longer than 100 bytes/],
  ];
  for (const [text, why] of bad) {
    assert.throws(() => feed(text, 7, 100), (err: { code?: string; message?: string }) => err.code === 'malformed-answer' && why.test(err.message ?? ''), JSON.stringify(text.slice(0, 60)));
  }
  // Repeated equal lengths are one length (RFC 9110 §8.6).
  assert.equal(feed('HTTP/1.1 200 OK\r\ncontent-length: 1, 1\r\n\r\na', 100)[0]!.r.body.toString(), 'a');
});
