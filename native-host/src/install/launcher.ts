// The launcher every manifest's `path` names: a small script in dnscost's data dir that runs the absolute node with
// the absolute host script (a `#!/bin/sh` exec, or a `.bat` on Windows), and the parser that reads one back, so that
// doctor and uninstall recognise a launcher of ours and know what it runs. Pure.
import type { Platform } from './platform.js';
import { shQuote } from './shell-words.js';

const LAUNCHER_MARK = 'dnscost native messaging host launcher, written by `dnscost-host install`';

/**
 * The launcher: browsers start the manifest's `path` with their own environment, where PATH may lack node, so it
 * runs the absolute node with the absolute host script. POSIX: a `#!/bin/sh` exec; Windows: a `.bat` (CRLF; `%`
 * doubled, since cmd expands it even inside quotes).
 */
export function launcherScript(platform: Platform, node: string, script: string): string {
  if (platform === 'win32') {
    const q = (s: string): string => `"${s.replace(/%/g, '%%')}"`;
    return ['@echo off', `rem ${LAUNCHER_MARK}.`, `${q(node)} ${q(script)} %*`, ''].join('\r\n');
  }
  return [
    '#!/bin/sh',
    `# ${LAUNCHER_MARK}.`,
    '# Browsers start this with their own environment (PATH may lack node), so both paths are absolute.',
    `exec ${shQuote(node)} ${shQuote(script)} "$@"`,
    '',
  ].join('\n');
}

/** The node and script a launcher of ours runs, or null when `text` is not one. */
export function parseLauncher(platform: Platform, text: string): { node: string; script: string } | null {
  if (!text.includes(LAUNCHER_MARK)) return null;
  if (platform === 'win32') {
    const m = /^"([^"]*)" "([^"]*)" %\*\r?$/m.exec(text);
    return m ? { node: m[1]!.replace(/%%/g, '%'), script: m[2]!.replace(/%%/g, '%') } : null;
  }
  const word = `((?:'[^']*'|\\\\')+)`;
  const m = new RegExp(`^exec ${word} ${word} "\\$@"$`, 'm').exec(text);
  const unquote = (w: string): string => w.replace(/'([^']*)'|\\'/g, (_all, inner: string | undefined) => inner ?? "'");
  return m ? { node: unquote(m[1]!), script: unquote(m[2]!) } : null;
}
