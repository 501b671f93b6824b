// The host's and the collector's command lines as a person meets them: every command's --help prints the usage and exits 0 without doing
// anything (the lab does not start, install writes nothing); a bad flag, a missing value or an unknown command exits
// 2 with the error's code, the message and the way to the usage, and never a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import { distPath, HOST_BIN, ROOT } from '../../lab/paths.js';

const COLLECTOR_MAIN = distPath('collector/main.ts');

const host = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [HOST_BIN, ...args], { encoding: 'utf8', timeout: 20_000, env, input: '' });

test('--help on every command prints the usage, exits 0 and does nothing else', () => {
  const home = mkdtempSync(join(tmpdir(), 'dnscost-cli-'));
  try {
    for (const command of ['measure', 'probe', 'hol', 'lab', 'install', 'uninstall', 'doctor']) {
      for (const flag of ['--help', '-h']) {
        const r = host([command, flag], { ...process.env, HOME: home });
        assert.equal(r.status, 0, `${command} ${flag}: ${r.stderr}`);
        assert.match(r.stdout, /^dnscost-host — /, `${command} ${flag}`);
        assert.doesNotMatch(r.stdout + r.stderr, /lab resolver \(CoreDNS\) on|installed|\n\s+at /, `${command} ${flag} did something`);
      }
    }
    assert.deepEqual(readdirSync(home), [], 'install --help wrote nothing');
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test('bad flags, missing values and unknown commands: exit 2, a coded message and the usage hint, no stack trace', () => {
  const cases: Array<[string[], RegExp]> = [
    [['measure', '--bogus', 'h.test'], /^dnscost-host: bad-request: Unknown option '--bogus'/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', 'h.test', '--repeat'], /^dnscost-host: bad-request: Option '--repeat <value>' argument missing/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53'], /^dnscost-host: bad-request: name at least one HOST/],
    [['install', '--bogus'], /^dnscost-host: bad-request: install: Unknown option '--bogus'/],
    [['doctor', '--timeout'], /^dnscost-host: bad-request: doctor: Option '--timeout <value>' argument missing/],
    [['lab', '--bogus'], /^dnscost-host: bad-request: lab: unknown argument "--bogus"/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--json', '--csv', 'h.test'], /^dnscost-host: bad-request: choose one output: --json or --csv/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--har', '/nonexistent/page.har'], /^dnscost-host: bad-request: --har: cannot read HAR file \/nonexistent\/page.har/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--har', HOST_BIN], /^dnscost-host: bad-request: --har: .* is not JSON/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--har', HOST_BIN, 'h.test'], /^dnscost-host: bad-request: --har replays one page/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--hosts-file', '/nonexistent/hosts.txt'], /^dnscost-host: bad-request: cannot read --hosts-file/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--hosts-file', '-'], /^dnscost-host: bad-request: no name in --hosts-file -/],
    [['measure', '--endpoint', 'udp://127.0.0.1:53', '--hosts-file'], /^dnscost-host: bad-request: Option '--hosts-file <value>' argument missing/],
    [['probe', '--frobnicate'], /^dnscost-host: bad-request: Unknown option '--frobnicate'/],
    [['probe', '--endpoint', 'udp://127.0.0.1:53', '--name'], /^dnscost-host: bad-request: Option '--name <value>' argument missing/],
    [['probe', '--endpoint', 'udp://127.0.0.1:53', '--name', 'not a name'], /^dnscost-host: bad-request: --name takes a hostname/],
    [['probe', '--endpoint', 'udp://127.0.0.1:53', '--timeout', '0'], /^dnscost-host: bad-request: --timeout takes 1 to 60000 ms/],
    [['probe'], /^dnscost-host: bad-request: name at least one --endpoint URL or --resolver ID/],
    [['probe', '--endpoint', 'udp://127.0.0.1:53', 'h.test'], /^dnscost-host: bad-request: Unexpected argument 'h.test'/],
    [['frobnicate'], /^dnscost-host: unknown command "frobnicate"/],
  ];
  for (const [args, message] of cases) {
    const r = host(args);
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at |TypeError|internal/, `${args.join(' ')} printed a stack trace:\n${r.stderr}`);
    if (args[0] !== 'frobnicate') assert.match(r.stderr, /usage: dnscost-host/, args.join(' '));
  }
});

test('the collector\'s command line: --version, --help, and bad options or commands exit 2 with the usage hint, no stack trace', () => {
  const collector = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    spawnSync(process.execPath, [COLLECTOR_MAIN, ...args], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH, ...env } });
  const version = collector(['--version']);
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
  assert.match(collector(['serve', '--help']).stdout, /^dnscost-collector: receives opt-in dnscost uploads/);
  const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [['--bogus'], {}, /^dnscost-collector: Unknown option '--bogus'/],
    [['publish'], {}, /^dnscost-collector: unknown command "publish"; the only one is serve/],
    [['serve', '--port', 'x'], {}, /^dnscost-collector: --port must be a number from 0 to 65535, not "x"/],
    [['serve'], { DNSCOST_COLLECTOR_PORT: '99999' }, /--port must be a number from 0 to 65535, not "99999"/],
    [['serve', '--database-url', 'mysql://x'], {}, /--database-url takes a postgres:\/\/ or postgresql:\/\/ URL/],
    [['serve', '--trusted-proxy', 'proxy.example'], {}, /--trusted-proxy proxy\.example is not an IP address/],
    [['serve', '--keep-days', '30'], {}, /--keep-days must be 0 or more than 90/],
  ];
  for (const [args, env, message] of cases) {
    const r = collector(args, env);
    assert.equal(r.status, 2, `${args.join(' ')}: exit ${r.status}\n${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
    assert.match(r.stderr, /usage: dnscost-collector --help/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${args.join(' ')} printed a stack trace`);
  }
});
