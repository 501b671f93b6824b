// `reg` command lines, as run and as printed, and reading a query's default value back.
import assert from 'node:assert/strict';
import { test } from 'vitest';
import { formatCommand } from './shell-words.js';
import { parseRegQuery, regAdd, regDelete, regQuery, type Command } from './windows-registry.js';

test('reg command lines (run only on Windows) and reading the default value back', () => {
  const key = 'HKCU\\Software\\Mozilla\\NativeMessagingHosts\\org.dnscost.host';
  const file = 'C:\\Users\\A B\\AppData\\Local\\dnscost\\hosts\\firefox\\org.dnscost.host.json';
  const cases: [Command, string[], string][] = [
    [regAdd(key, file), ['add', key, '/ve', '/t', 'REG_SZ', '/d', file, '/f'], `reg add ${key} /ve /t REG_SZ /d "${file}" /f`],
    [regDelete(key), ['delete', key, '/f'], `reg delete ${key} /f`],
    [regQuery(key), ['query', key, '/ve'], `reg query ${key} /ve`],
  ];
  for (const [cmd, args, shown] of cases) {
    assert.equal(cmd.file, 'reg');
    assert.deepEqual(cmd.args, args);
    assert.equal(formatCommand('win32', [cmd.file, ...cmd.args]), shown);
  }
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Default)    REG_SZ    ${file}\r\n\r\n`), file);
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Standard)    REG_SZ    C:\\x.json\r\n`), 'C:\\x.json');
  assert.equal(parseRegQuery(`\r\n${key}\r\n    (Default)    REG_SZ    (value not set)\r\n`), '(value not set)');
  assert.equal(parseRegQuery('ERROR: The system was unable to find the specified registry key or value.\r\n'), null);
  assert.equal(formatCommand('linux', ['/usr/bin/node', '/a b/x.js', 'install', '--home', "/it's"]), `/usr/bin/node '/a b/x.js' install --home '/it'\\''s'`);
});
