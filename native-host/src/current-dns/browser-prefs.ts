// Readers of the files where browsers keep their DNS over HTTPS settings, one pure function per format: Chromium's
// policy JSON and `Local State`, `reg query` output (Windows policy keys), Firefox's `prefs.js`/`user.js`,
// `profiles.ini` and `policies.json`, and a process command line. Each takes text and returns what it says; none
// reads a file (browser-doh.ts does). Malformed text gives "nothing said", never an exception.

/** Chromium's secure DNS modes (the DnsOverHttpsMode policy's and the `dns_over_https.mode` pref's values). */
export const CHROMIUM_MODES = ['off', 'automatic', 'secure'] as const;
export type ChromiumMode = (typeof CHROMIUM_MODES)[number];

/** What one Chromium source says about secure DNS; a field is absent when that source does not set it. */
export interface ChromiumDohFields {
  mode?: ChromiumMode;
  templates?: string[];
}

/** A JSON object's parsed value, or null for anything else (malformed, an array, a scalar). */
export function jsonObject(text: string | null): Record<string, unknown> | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text.replace(/^\uFEFF/, ''));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Space-separated DoH URI templates (Chromium keeps them in one string). */
export function splitTemplates(text: string): string[] {
  return text.split(/\s+/).filter((t) => /^https:\/\//i.test(t));
}

/** A mode and templates as Chromium stores them (mode one of CHROMIUM_MODES, templates one string); others ignored. */
function chromiumFields(mode: unknown, templates: unknown): ChromiumDohFields {
  return {
    ...(typeof mode === 'string' && (CHROMIUM_MODES as readonly string[]).includes(mode) ? { mode: mode as ChromiumMode } : {}),
    ...(typeof templates === 'string' ? { templates: splitTemplates(templates) } : {}),
  };
}

/** Chromium policies by name (a policy file's object, a registry key's values): DnsOverHttpsMode and DnsOverHttpsTemplates. */
export function chromiumPolicyValues(o: Record<string, unknown> | null): ChromiumDohFields {
  return o ? chromiumFields(o.DnsOverHttpsMode, o.DnsOverHttpsTemplates) : {};
}

/** Chromium's `Local State` (the browser-wide prefs of a user-data dir): `dns_over_https.mode` and `.templates`. */
export function chromiumLocalState(text: string | null): ChromiumDohFields {
  const doh = jsonObject(text)?.dns_over_https;
  if (typeof doh !== 'object' || doh === null) return {};
  const d = doh as Record<string, unknown>;
  return chromiumFields(d.mode, d.templates);
}

/** The string values `reg query KEY` printed, by name (`    DnsOverHttpsMode    REG_SZ    secure`). */
export function parseRegValues(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of stdout.matchAll(/^\s+(\S+)\s+REG_(?:EXPAND_)?SZ\s+(.*?)\s*$/gm)) out[m[1]!] = m[2]!;
  return out;
}

/** A Firefox preference value: a number, a string or a boolean. */
export type PrefValue = number | string | boolean;

/**
 * The `user_pref("name", value);` lines of a Firefox `prefs.js` or `user.js`, by name (a later line wins, as Firefox
 * reads them). Lines that do not parse are skipped.
 */
export function parsePrefsJs(text: string | null): Map<string, PrefValue> {
  const out = new Map<string, PrefValue>();
  for (const m of (text ?? '').matchAll(/^\s*user_pref\(\s*"((?:[^"\\]|\\.)*)"\s*,\s*(.+?)\s*\)\s*;/gm)) {
    try {
      const value: unknown = JSON.parse(m[2]!);
      if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') out.set(JSON.parse(`"${m[1]!}"`) as string, value);
    } catch {
      // Not a value JSON can read (a Firefox-only escape): as if the line were not there.
    }
  }
  return out;
}

/** The sections of an INI file (`profiles.ini`) in order, each with its keys. */
export function parseIni(text: string | null): Array<{ name: string; keys: Record<string, string> }> {
  const out: Array<{ name: string; keys: Record<string, string> }> = [];
  for (const raw of (text ?? '').replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const line = raw.trim();
    const section = /^\[(.+)\]$/.exec(line);
    if (section) out.push({ name: section[1]!, keys: {} });
    else if (out.length && /^[^;#=][^=]*=/.test(line)) {
      const at = line.indexOf('=');
      out.at(-1)!.keys[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
  }
  return out;
}

/**
 * The default profile `profiles.ini` names, as Firefox picks it: the `[Install…]` section's `Default` (the first, as
 * the section's name is a hash of the install directory we do not compute), else the `[Profile…]` with `Default=1`.
 * With `name`, the profile of that name instead (`-P name`). The path as written and whether it is relative.
 */
export function firefoxIniProfile(text: string | null, name?: string): { path: string; relative: boolean } | null {
  const sections = parseIni(text);
  const profiles = sections.filter((s) => /^Profile\d+$/.test(s.name) && s.keys.Path);
  const of = (p: { keys: Record<string, string> }) => ({ path: p.keys.Path!, relative: p.keys.IsRelative !== '0' });
  if (name !== undefined) {
    const named = profiles.find((p) => p.keys.Name === name);
    return named ? of(named) : null;
  }
  const install = sections.find((s) => /^Install/.test(s.name) && s.keys.Default);
  if (install) {
    const listed = profiles.find((p) => p.keys.Path === install.keys.Default);
    return listed ? of(listed) : { path: install.keys.Default!, relative: !/^(\/|[A-Za-z]:[\\/])/.test(install.keys.Default!) };
  }
  const marked = profiles.find((p) => p.keys.Default === '1');
  return marked ? of(marked) : null;
}

/** Firefox's DNSOverHTTPS enterprise policy (policies.json), as far as it concerns the mode and the server. */
export interface FirefoxDohPolicy {
  enabled?: boolean;
  providerUrl?: string;
  /** False: no fallback to plain DNS (TRR mode 3). */
  fallback?: boolean;
  /** The prefs are locked: the person's own values do not count. */
  locked: boolean;
}

/** The DNSOverHTTPS policy of a Firefox `policies.json`, or null when it sets none (or is not JSON). */
export function firefoxPolicy(text: string | null): FirefoxDohPolicy | null {
  const policies = jsonObject(text)?.policies;
  const p = typeof policies === 'object' && policies !== null ? (policies as Record<string, unknown>).DNSOverHTTPS : undefined;
  if (typeof p !== 'object' || p === null) return null;
  const d = p as Record<string, unknown>;
  return {
    ...(typeof d.Enabled === 'boolean' ? { enabled: d.Enabled } : {}),
    ...(typeof d.ProviderURL === 'string' && /^https:\/\//i.test(d.ProviderURL) ? { providerUrl: d.ProviderURL } : {}),
    ...(typeof d.Fallback === 'boolean' ? { fallback: d.Fallback } : {}),
    locked: d.Locked === true,
  };
}

/**
 * Firefox's TRR mode as it treats a pref value (TRRServiceBase's ModeFromPrefs): 0 off by default, 2 DoH first,
 * 3 DoH only, 5 off by choice; the reserved 1 and 4, anything above 5 and anything not a whole number count as 5.
 */
export function trrMode(value: PrefValue | undefined): 0 | 2 | 3 | 5 | undefined {
  if (value === undefined) return undefined;
  return value === 0 || value === 2 || value === 3 ? value : 5;
}

/**
 * A Windows command line as its words (quotes group and are dropped; the simple rules, enough for a browser's own
 * command line).
 */
export function windowsWords(line: string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  let quoted = false;
  for (const c of line) {
    if (c === '"') {
      quoted = !quoted;
      word ??= '';
    } else if (/\s/.test(c) && !quoted) {
      if (word !== null) out.push(word);
      word = null;
    } else word = (word ?? '') + c;
  }
  if (word !== null) out.push(word);
  return out;
}

/**
 * A macOS `ps -o command=` line (argv joined by spaces) as the executable and its arguments: the executable runs to
 * the first ` -` after an app bundle's `Contents/MacOS/` (app names have spaces), and each argument runs from one
 * ` -` to the next, so `--user-data-dir=/Users/a/My Dir` stays whole and `-profile /path` is one word with its value.
 */
export function macWords(command: string): { exe: string; args: string[] } {
  const text = command.trim();
  const bundle = text.indexOf('.app/Contents/MacOS/');
  const end = bundle >= 0 ? text.slice(bundle).search(/ -/) : text.indexOf(' ');
  const exeEnd = end < 0 ? text.length : bundle >= 0 ? bundle + end : end;
  return { exe: text.slice(0, exeEnd), args: text.slice(exeEnd).split(/ (?=-)/).map((a) => a.trim()).filter(Boolean) };
}

/**
 * The value of a command-line flag in `args`: `--name=value`, `-name=value`, `--name value` / `-name value` (the next
 * word), or a word `-name value` as macWords makes it. `names` are spelled without dashes, matched regardless of case.
 */
export function flagValue(args: readonly string[], ...names: string[]): string | null {
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=\s]+)(?:=(.*)|\s+(.+))?$/s.exec(args[i]!);
    // Firefox's flags are case-insensitive (-P, -p); Chromium's are lower case anyway.
    if (!m || !names.some((n) => n.toLowerCase() === m[1]!.toLowerCase())) continue;
    const value = m[2] ?? m[3] ?? args[i + 1];
    if (value !== undefined && value !== '' && !(m[2] === undefined && m[3] === undefined && value.startsWith('-'))) return value;
  }
  return null;
}
