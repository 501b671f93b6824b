// Parsing the arguments of install, uninstall and doctor, good and bad.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { DnscostError } from '../../../common/errors.js';
import { parseHostArgs } from './args.js';
import { BROWSERS, type Platform } from './platform.js';

test('arguments: browsers, all, comma lists; bad usage is a bad-request DnscostError', () => {
  const deps = { home: '/home/u', platform: 'linux' as const };
  const o = parseHostArgs('install', ['--browser', 'firefox,chrome', '--browser', 'Chrome', '--dry-run', '--home', '/tmp/h'], deps);
  assert.deepEqual(o.browsers, ['firefox', 'chrome']);
  assert.equal(o.dryRun, true);
  assert.equal(o.home, '/tmp/h');
  assert.equal(o.homeGiven, true);
  assert.deepEqual(parseHostArgs('doctor', ['--browser', 'all'], deps).browsers, [...BROWSERS]);
  const d = parseHostArgs('doctor', [], deps);
  assert.equal(d.browsers, null);
  assert.equal(d.home, '/home/u');
  assert.equal(d.homeGiven, false);
  assert.equal(parseHostArgs('doctor', ['--timeout', '1500'], deps).timeoutMs, 1500);
  const ids = parseHostArgs('install', ['--extension-id', 'a'.repeat(32), '--extension-id', 'me@example.org,{12345678-1234-1234-1234-123456789abc}'], deps).extensionIds;
  assert.deepEqual(ids, ['a'.repeat(32), 'me@example.org', '{12345678-1234-1234-1234-123456789abc}']);
  assert.deepEqual(o.extensionIds, []);
  const bad: [string, 'install' | 'uninstall' | 'doctor', string[], Platform][] = [
    ['unknown browser', 'install', ['--browser', 'netscape'], 'linux'],
    ['unknown option', 'install', ['--bogus'], 'linux'],
    ['doctor has no --dry-run', 'doctor', ['--dry-run'], 'linux'],
    ['install has no --timeout', 'install', ['--timeout', '5'], 'linux'],
    ['positional', 'uninstall', ['firefox'], 'linux'],
    ['zero timeout', 'doctor', ['--timeout', '0'], 'linux'],
    ['user-data-dir on Windows', 'install', ['--chromium-user-data-dir', 'C:\\x'], 'win32'],
    ['not an extension id', 'install', ['--extension-id', 'abc'], 'linux'],
    ['an id with letters past p', 'install', ['--extension-id', 'z'.repeat(32)], 'linux'],
    ['doctor has no --extension-id', 'doctor', ['--extension-id', 'a'.repeat(32)], 'linux'],
  ];
  for (const [why, cmd, argv, platform] of bad) {
    assert.throws(() => parseHostArgs(cmd, argv, { home: '/h', platform }), (e: unknown) => e instanceof DnscostError && e.code === 'bad-request', why);
  }
});
