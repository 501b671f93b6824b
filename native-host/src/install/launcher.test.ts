// Launchers: written and parsed back for awkward paths, and run by a real /bin/sh.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'vitest';
import { launcherScript, parseLauncher } from './launcher.js';
import type { Platform } from './platform.js';

test('launchers run the absolute node and script, and parse back (quotes, spaces, percent signs)', () => {
  const cases: [Platform, string, string][] = [
    ['linux', '/usr/bin/node', '/work/main/native-host/bin/dnscost-host.js'],
    ['darwin', '/Users/o\'brien/.nvm/versions/node/v20/bin/node', '/Users/o\'brien/My Code/dnscost/native-host/bin/dnscost-host.js'],
    ['linux', '/opt/a $b `c`/node', '/x/"q"/s.js'],
    ['win32', 'C:\\Program Files\\nodejs\\node.exe', 'C:\\Users\\u\\100% real\\native-host\\bin\\dnscost-host.js'],
  ];
  for (const [platform, node, script] of cases) {
    const text = launcherScript(platform, node, script);
    assert.deepEqual(parseLauncher(platform, text), { node, script }, `${platform} ${node}`);
    if (platform === 'win32') {
      assert.match(text, /^@echo off\r\n/);
      assert.match(text, /%%/);
      assert.match(text, /" %\*\r\n$/);
    } else {
      assert.match(text, /^#!\/bin\/sh\n/);
      assert.match(text, /\nexec '.*' "\$@"\n$/);
    }
  }
  const real = spawnSync('/bin/sh', ['-c', `${launcherScript('linux', '/bin/echo', "it's here").split('\n').slice(3).join('\n')}`, 'sh', 'a b', 'c']);
  assert.equal(real.stdout.toString(), "it's here a b c\n", 'sh runs the exec line with the quoted words intact');
  assert.equal(parseLauncher('linux', '#!/bin/sh\nexec node x.js "$@"\n'), null, 'not ours: no mark');
});
