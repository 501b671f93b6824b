// The host's command line as a person meets it: every command's --help prints the usage and exits 0 without doing
// anything (the lab does not start, install writes nothing); a bad flag, a missing value or an unknown command exits
// 2 with the error's code, the message and the way to the usage, and never a stack trace.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'vitest';
import { HOST_BIN } from '../../lab/paths.js';

const host = (args: string[], env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [HOST_BIN, ...args], { encoding: 'utf8', timeout: 20_000, env, input: '' });

test('--help on every command prints the usage, exits 0 and does nothing else', () => {
  const home = mkdtempSync(join(tmpdir(), 'dnscost-cli-'));
  try {
    for (const command of ['measure', 'lab', 'install', 'uninstall', 'doctor']) {
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
