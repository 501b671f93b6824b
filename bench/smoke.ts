// `--smoke`, which every benchmark takes: a few loads or exchanges, enough to show it still runs end to end. Its report
// goes to stdout only; nothing is written under bench/results. tests/integration/bench-smoke.test.ts and
// tests/browser/bench-smoke.test.ts run every benchmark this way, so none can rot unnoticed.

/** The option, for each benchmark's parseArgs. */
export const SMOKE_OPTION = { smoke: { type: 'boolean', default: false } } as const;

/** Where the report is written: nowhere under --smoke (null), else `out`, else `fallback` (null: stdout only). */
export function reportPath(values: { smoke?: boolean | undefined; out?: string | undefined }, fallback: string | null = null): string | null {
  if (values.smoke) return null;
  return values.out ?? fallback;
}
