// The Windows registry as `reg` command lines: on Windows a browser finds our manifest through one HKCU key per
// browser whose default value is the manifest's path. Install adds the key, uninstall deletes it and doctor queries
// it; this builds those commands and reads a query's answer back. They run through `Deps.run` (deps.ts), on Windows
// only. Pure.

/** A program and its arguments, run without a shell. */
export interface Command {
  file: string;
  args: string[];
}

/** `reg add KEY /ve /t REG_SZ /d MANIFEST /f`: the key's default value names the manifest. */
export function regAdd(key: string, manifest: string): Command {
  return { file: 'reg', args: ['add', key, '/ve', '/t', 'REG_SZ', '/d', manifest, '/f'] };
}

/** `reg delete KEY /f`. */
export function regDelete(key: string): Command {
  return { file: 'reg', args: ['delete', key, '/f'] };
}

/** `reg query KEY /ve`: prints the key's default value. */
export function regQuery(key: string): Command {
  return { file: 'reg', args: ['query', key, '/ve'] };
}

/** The default value `reg query KEY /ve` printed, or null. The value's label is localised ("(Default)", "(Standard)"). */
export function parseRegQuery(stdout: string): string | null {
  const m = /^\s+\([^)]*\)\s+REG_(?:EXPAND_)?SZ\s+(.*?)\s*$/m.exec(stdout);
  return m ? m[1]! : null;
}
