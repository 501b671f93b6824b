// The arguments `install`, `uninstall` and `doctor` take (--browser, --chromium-user-data-dir, --home, --json, and
// --dry-run or --timeout; install also --extension-id), parsed into the options the three commands share; bad usage is
// a `bad-request` DnscostError.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CODES, DnscostError } from '../../../common/errors.js';
import { isChromiumId, isGeckoId } from '../../../common/extension-ids.js';
import type { TargetSelection } from './browsers.js';
import type { Deps } from './deps.js';
import { DOCTOR_HELLO_TIMEOUT_MS } from './hello-probe.js';
import { BROWSERS, pathFor, type Browser } from './platform.js';

/** The options the three commands share, after parsing. */
export interface HostOptions extends TargetSelection {
  home: string;
  homeGiven: boolean;
  dryRun: boolean;
  json: boolean;
  timeoutMs: number;
  /** install: extension ids the manifests allow besides dnscost's own (a Chromium id, or a Firefox add-on id). */
  extensionIds: string[];
}

/** Parses the arguments of `install`, `uninstall` or `doctor`; bad usage is a `bad-request` DnscostError. */
export function parseHostArgs(command: 'install' | 'uninstall' | 'doctor', argv: string[], deps: Pick<Deps, 'home' | 'platform'>): HostOptions {
  const bad = (message: string): never => {
    throw new DnscostError(CODES.BAD_REQUEST, `${command}: ${message}`);
  };
  const options: NonNullable<ParseArgsConfig['options']> = {
    browser: { type: 'string', multiple: true },
    'chromium-user-data-dir': { type: 'string' },
    home: { type: 'string' },
    json: { type: 'boolean' },
    ...(command === 'doctor' ? { timeout: { type: 'string' } } : { 'dry-run': { type: 'boolean' } }),
    ...(command === 'install' ? { 'extension-id': { type: 'string', multiple: true } } : {}),
  };
  let parsed: { values: Record<string, string | string[] | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({ args: argv, options, strict: true, allowPositionals: true }) as typeof parsed;
  } catch (err) {
    return bad((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (positionals.length) bad(`unexpected argument ${JSON.stringify(positionals[0])}`);
  const p = pathFor(deps.platform);
  let browsers: Browser[] | null = null;
  const named = (values.browser as string[] | undefined)?.flatMap((s) => s.split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (named?.length) {
    browsers = [];
    for (const b of named) {
      if (b === 'all') browsers.push(...BROWSERS);
      else if ((BROWSERS as readonly string[]).includes(b)) browsers.push(b as Browser);
      else bad(`unknown browser ${JSON.stringify(b)}; known: ${BROWSERS.join(', ')}, all`);
    }
    browsers = [...new Set(browsers)];
  }
  const udd = values['chromium-user-data-dir'] as string | undefined;
  if (udd !== undefined && deps.platform === 'win32') bad('--chromium-user-data-dir: Chromium on Windows reads hosts from the registry only');
  if (udd !== undefined && !udd) bad('--chromium-user-data-dir needs a directory');
  const home = values.home as string | undefined;
  if (home !== undefined && !home) bad('--home needs a directory');
  let timeoutMs = DOCTOR_HELLO_TIMEOUT_MS;
  if (values.timeout !== undefined) {
    if (!/^\d+$/.test(values.timeout as string) || Number(values.timeout) === 0) bad(`--timeout takes milliseconds, not ${JSON.stringify(values.timeout)}`);
    timeoutMs = Number(values.timeout);
  }
  const extensionIds = ((values['extension-id'] as string[] | undefined) ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
  for (const id of extensionIds) {
    if (!isChromiumId(id) && !isGeckoId(id)) bad(`--extension-id ${JSON.stringify(id)} is neither a Chromium extension id (32 letters a-p) nor a Firefox add-on id (name@domain or {UUID})`);
  }
  return {
    browsers,
    userDataDir: udd ? p.resolve(udd) : null,
    home: home ? p.resolve(home) : deps.home,
    homeGiven: home !== undefined,
    dryRun: (values['dry-run'] as boolean | undefined) ?? false,
    json: (values.json as boolean | undefined) ?? false,
    timeoutMs,
    extensionIds,
  };
}
