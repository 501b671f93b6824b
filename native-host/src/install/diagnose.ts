// The doctor's verdicts, pure: from what doctor observed of one browser's registration (the registry value, the
// manifest's text, the files it names, the host's answer to hello), the checks in order, each failed one with the
// command that fixes it. doctor.ts gathers the observation; this decides.
import { GECKO_ID, HOST_NAME } from '../../../common/extension-ids.js';
import { PROTOCOL_VERSION } from '../../../common/schema.js';
import type { BrowserTarget } from './browsers.js';
import type { PathState } from './fs.js';
import type { HelloResult } from './hello-probe.js';
import { parseLauncher } from './launcher.js';
import { CHROMIUM_ORIGIN } from './manifest.js';
import { pathFor, type Platform } from './platform.js';

/** Everything doctor gathered about one target; the verdicts follow from it alone. */
export interface Observation {
  target: BrowserTarget;
  platform: Platform;
  /** Windows: the manifest path the registry key names; null when the key is absent. */
  registryValue?: string | null;
  /** The manifest's text, or null when absent. */
  manifestText: string | null;
  /** The manifest's `path` on disk (absent when the manifest names none). */
  hostPath?: PathState;
  /** The text of the file `path` names, when small enough to be a launcher. */
  launcherText?: string | null;
  node?: PathState;
  script?: PathState;
  /** The compiled host the script imports (dist/native-host/src/main.js). */
  built?: PathState;
  /** Beside a packaged executable (not a launcher): its QUIC companion, and where it was looked for. */
  companion?: PathState;
  companionPath?: string;
  hello?: HelloResult;
}

/** One line of the doctor's report. */
export interface Check {
  check: string;
  ok: boolean;
  detail: string;
  /** The command that fixes it. */
  fix?: string;
}

/** The fix commands doctor offers for one target. */
export interface Fixes {
  install: string;
  build: string;
}

/** Which extensions a manifest lets start the host: dnscost's own, then any added with `install --extension-id`. */
function allowedList(allowed: unknown[], own: string): string {
  const others = allowed.filter((x) => x !== own).map(String);
  return others.length ? `${own} (dnscost) and ${others.join(', ')} (added with install --extension-id)` : `${own} (dnscost)`;
}

/** The doctor's verdicts on one target, in order; checks that depend on a failed one are left out. */
export function diagnose(obs: Observation, fixes: Fixes): Check[] {
  const checks: Check[] = [];
  const pass = (check: string, detail: string): void => void checks.push({ check, ok: true, detail });
  const fail = (check: string, detail: string, fix: string): Check[] => {
    checks.push({ check, ok: false, detail, fix });
    return checks;
  };
  const { target } = obs;
  if (target.registryKey) {
    if (obs.registryValue == null) return fail('registry', `no key ${target.registryKey}`, fixes.install);
    if (obs.registryValue !== target.manifestPath) pass('registry', `${target.registryKey} names ${obs.registryValue} (not dnscost's ${target.manifestPath}); checking that one`);
    else pass('registry', `${target.registryKey} names the manifest`);
  }
  const where = target.registryKey ? (obs.registryValue ?? target.manifestPath) : target.manifestPath;
  if (obs.manifestText === null) return fail('manifest', `missing: ${where}`, fixes.install);
  let m: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(obs.manifestText);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    m = parsed as Record<string, unknown>;
  } catch (err) {
    return fail('manifest', `not valid JSON (${(err as Error).message}): ${where}`, fixes.install);
  }
  pass('manifest', 'present, valid JSON');
  if (m.name !== HOST_NAME) return fail('name', `is ${JSON.stringify(m.name)}, must be ${JSON.stringify(HOST_NAME)}`, fixes.install);
  pass('name', HOST_NAME);
  if (m.type !== 'stdio') return fail('type', `is ${JSON.stringify(m.type)}, must be "stdio"`, fixes.install);
  if (target.browser === 'firefox') {
    const ids = m.allowed_extensions;
    if (!Array.isArray(ids) || !ids.includes(GECKO_ID)) return fail('allowed_extensions', `${JSON.stringify(ids)} lacks ${JSON.stringify(GECKO_ID)}`, fixes.install);
    pass('allowed_extensions', allowedList(ids, GECKO_ID));
  } else {
    const origins = m.allowed_origins;
    if (!Array.isArray(origins) || !origins.includes(CHROMIUM_ORIGIN)) {
      // Chromium compares origins exactly: a missing trailing slash is the usual near miss.
      const near = Array.isArray(origins) && origins.includes(CHROMIUM_ORIGIN.slice(0, -1)) ? ' (it has the origin without the trailing slash, which Chromium rejects)' : '';
      return fail('allowed_origins', `${JSON.stringify(origins)} lacks ${JSON.stringify(CHROMIUM_ORIGIN)}${near}`, fixes.install);
    }
    pass('allowed_origins', allowedList(origins, CHROMIUM_ORIGIN));
  }
  const hostPath = m.path;
  if (typeof hostPath !== 'string' || !pathFor(obs.platform).isAbsolute(hostPath)) {
    return fail('path', `${JSON.stringify(hostPath)} is not an absolute path (browsers need one)`, fixes.install);
  }
  const hp = obs.hostPath;
  if (!hp?.exists) return fail('path', `${hostPath} does not exist`, fixes.install);
  if (!hp.isFile) return fail('path', `${hostPath} is not a file`, fixes.install);
  if (!hp.executable) return fail('path', `${hostPath} is not executable`, fixes.install);
  pass('path', `${hostPath} (executable)`);
  const launcher = obs.launcherText ? parseLauncher(obs.platform, obs.launcherText) : null;
  if (launcher) {
    if (!obs.node?.exists || !obs.node.executable) return fail('node', `the launcher runs ${launcher.node}, which is ${obs.node?.exists ? 'not executable' : 'gone'}`, fixes.install);
    pass('node', launcher.node);
    if (!obs.script?.exists) return fail('script', `the launcher runs ${launcher.script}, which is gone`, fixes.install);
    pass('script', launcher.script);
    if (obs.built && !obs.built.exists) return fail('build', 'the host is not compiled (dist/native-host/src/main.js is missing)', fixes.build);
  } else {
    pass('launcher', `${hostPath} is not a dnscost launcher (the packaged host, or another); starting it as is`);
    if (obs.companion && obs.companionPath) {
      if (!obs.companion.exists || !obs.companion.executable) return fail('companion', `${obs.companionPath} is ${obs.companion.exists ? 'not executable' : 'missing'} (no DoQ or DoH3 without it)`, fixes.install);
      pass('companion', obs.companionPath);
    }
  }
  const hello = obs.hello;
  if (!hello) return checks;
  if (!hello.ok) {
    const tail = hello.stderr.trim().split('\n').slice(-3).join(' | ');
    return fail('hello', `${hello.error}${tail ? `; stderr: ${tail}` : ''}`, launcher ? `${fixes.build} && ${fixes.install}` : fixes.install);
  }
  const r = hello.reply;
  if (r.type !== 'hello') return fail('hello', `answered ${JSON.stringify(r)} instead of a hello`, fixes.install);
  if (r.protocol !== PROTOCOL_VERSION) {
    return fail('hello', `speaks protocol ${String(r.protocol)}, this dnscost speaks ${PROTOCOL_VERSION} (an older or newer install)`, fixes.install);
  }
  pass('hello', `answered: dnscost-host ${String(r.version)}, protocol ${String(r.protocol)}, in ${Math.round(hello.ms)} ms`);
  return checks;
}
