// The shape of the house, checked: no import cycle anywhere in the source, nothing outside tests/ imports tests/, the
// product imports neither the lab nor the benchmarks, one transport table, a hostname's four shapes, READMEs short, the
// engine names no transport, no source file is oversized without a stated reason, the pure folder is pure by its own
// type check (and that check really fails on a DOM or node: use), and the README's layout table is the tree.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { test } from 'vitest';
import { ROOT } from '../lab/paths.js';

/** Folders that are not source: dependencies, builds, outputs, vendored files. */
const SKIP = new Set(['node_modules', 'dist', 'build', 'demo-output', '.git', '.run', 'bin', 'vendor']);

/** Every file under `dir` (relative to ROOT) whose name matches `pattern`. */
function files(pattern: RegExp, dir = ROOT): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name.startsWith('.') || SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(pattern, p));
    else if (pattern.test(e.name)) out.push(relative(ROOT, p));
  }
  return out.sort();
}

const SOURCES = files(/\.(ts|mts|mjs)$/).filter((f) => !f.endsWith('.d.ts'));

/** The source files `file` imports (static, type-only and dynamic imports, re-exports), relative to ROOT. */
function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
  const out: string[] = [];
  for (const { fileName } of info.importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = normalize(join(dirname(file), fileName));
    const found = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, join(base, 'index.ts')].find((c) => existsSync(join(ROOT, c)) && statSync(join(ROOT, c)).isFile());
    if (found) out.push(found);
  }
  return out;
}

const GRAPH = new Map(SOURCES.map((f) => [f, importsOf(f)]));

/** Strongly connected components of more than one file (Tarjan), i.e. the import cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  let n = 0;
  const visit = (v: string): void => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) {
        on.delete(w);
        c.push(w);
        if (w === v) break;
      }
      if (c.length > 1) out.push(c.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

test('no import cycle anywhere in the source (type-only imports included); the check finds one when there is one', () => {
  assert.ok(SOURCES.length > 150, `only ${SOURCES.length} source files found`);
  assert.deepEqual(cycles(GRAPH), []);
  // The detector itself: a three-file circle is found.
  assert.deepEqual(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])), [['a', 'b', 'c']]);
});

test('nothing outside tests/ imports tests/', () => {
  const offenders = [...GRAPH].flatMap(([f, to]) => (f.startsWith('tests/') ? [] : to.filter((t) => t.startsWith('tests/')).map((t) => `${f} -> ${t}`)));
  assert.deepEqual(offenders, []);
});

test('the product imports neither the lab nor the benchmarks: common/, native-host/, extension/ and collector/ reach lab/ and bench/ only through a process', () => {
  const product = ['common/', 'native-host/', 'extension/', 'collector/'];
  const offenders = [...GRAPH].flatMap(([f, to]) =>
    product.some((p) => f.startsWith(p)) && !f.endsWith('.test.ts') ? to.filter((t) => t.startsWith('lab/') || t.startsWith('bench/')).map((t) => `${f} -> ${t}`) : []);
  assert.deepEqual(offenders, []);
});

test('one transport table: only common/transports.ts says what a transport is, its scheme and its default port', () => {
  const tables = SOURCES.filter((f) => !f.endsWith('.test.ts') && /export const TRANSPORTS\b/.test(readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(tables, ['common/transports.ts']);
  // A map from transport ids to ports (`dot: 853`, `doh1: 443`) is a copy of the table's defaults.
  const ports = /\b(dot|doq)\s*:\s*853\b|\b(doh|doh1|doh3)\s*:\s*443\b|\b(udp|tcp)\s*:\s*53\b/;
  const copies = SOURCES.filter((f) => f !== 'common/transports.ts' && !f.endsWith('.test.ts') && !f.startsWith('tests/') && ports.test(readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(copies, []);
});

test('one storage mechanism: only extension/src/background/storage.ts declares a storage area or queues its writes', () => {
  const area = /interface \w+ \{[^}]*\bset\(items: Record<string, unknown>\)/;
  const chain = /private (readonly )?\w+: Promise<unknown> = Promise\.resolve\(\)/;
  const offenders = SOURCES.filter((f) => f !== 'extension/src/background/storage.ts' && !f.endsWith('.test.ts')).flatMap((f) => {
    const text = readFileSync(join(ROOT, f), 'utf8');
    return [...(area.test(text) ? [`${f}: a storage area interface`] : []), ...(f.startsWith('extension/') && chain.test(text) ? [`${f}: a write queue of its own`] : [])];
  });
  assert.deepEqual(offenders, []);
});

test('one hostname parser and one list of special-use suffixes: only common/hostname.ts checks labels or lists suffixes', () => {
  // A second parser checks label syntax or name length; a second suffix list names home.arpa (in every such list).
  const parser = /\bDNS_LABEL\.test\(|\bMAX_HOSTNAME_LENGTH\b|\{1,63\}/;
  const suffixes = /['"]home\.arpa['"]/;
  const offenders = SOURCES.filter((f) => f !== 'common/hostname.ts' && !f.endsWith('.test.ts') && !f.startsWith('tests/')).flatMap((f) => {
    const text = readFileSync(join(ROOT, f), 'utf8');
    return [...(parser.test(text) ? [`${f}: a hostname check of its own`] : []), ...(suffixes.test(text) ? [`${f}: a suffix list of its own`] : [])];
  });
  assert.deepEqual(offenders, []);
});

test('one page record, one writer: only common/page-builder.ts changes a page record; the recorder routes events to it', () => {
  // The recorder reads the builder's getters and calls its methods; an assignment or a push to a record's field there
  // is a second writer (TypeScript refuses most: the builder has no setters).
  const recorder = readFileSync(join(ROOT, 'extension/src/background/page-records.ts'), 'utf8');
  const writes = recorder.split('\n').map((l, i) => [i + 1, l] as const).filter(([, l]) => /\.page\.\w+(\.\w+)*\s*(=(?!=)|\+\+|\+=|-=)|\.page\.\w+\.push\(/.test(l));
  assert.deepEqual(writes.map(([i, l]) => `page-records.ts:${i}: ${l.trim()}`), []);
  // Nothing but the builder makes a page record out of events: no other file defines the record's hosts from scratch.
  const builders = SOURCES.filter((f) => f !== 'common/page-builder.ts' && !f.endsWith('.test.ts') && !f.startsWith('tests/') && !f.startsWith('lab/'))
    .filter((f) => /version: PAGE_RECORD_VERSION/.test(readFileSync(join(ROOT, f), 'utf8')));
  assert.deepEqual(builders, []);
});

test("a hostname's walk: four shapes, one name for the time it was first needed", () => {
  // The page record's host (built from the browser's URL), the host spec (what the extension plans, the request carries
  // and the engine replays), the exchange record (its stored form a projection of it) and the model's host cost
  // (drawn by the panel). The model's input host and the cost are the record's host narrowed, not shapes of their own.
  const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');
  assert.match(read('common/page-record.ts'), /export interface PageHost extends Omit<ClassifiedHost, 'ok'>/);
  assert.match(read('common/schema.ts'), /export type HostSpec = Exclude<v\.InferOutput<typeof hostSpec>, string>/);
  assert.match(read('common/stored-record.ts'), /export interface StoredRecord extends Pick<ExchangeRecord,/);
  assert.match(read('common/cost-model.ts'), /export interface PageHostInput extends Pick<PageHost, 'name' \| 'firstNeededMs'>/);
  assert.match(read('common/cost-model.ts'), /export interface HostCost extends Pick<PageHost, 'name' \| 'firstNeededMs' \| 'completedMs'>/);
  // The time a host was first needed is firstNeededMs everywhere; its older names only where old stored data is read.
  const older = /\b(firstNeededAt|scheduledAt|firstSeenAt)\b/;
  const readers = new Set(['common/stored-record.ts', 'bench/validate/legacy.ts']);
  const offenders = SOURCES.filter((f) => !readers.has(f) && !f.endsWith('.test.ts') && !f.startsWith('tests/') && older.test(read(f)));
  assert.deepEqual(offenders, []);
});

test('the engine names no transport: no comparison of a transport id in native-host/src/engine', () => {
  const engine = SOURCES.filter((f) => f.startsWith('native-host/src/engine/') && !f.endsWith('.test.ts'));
  assert.ok(engine.length >= 3, `engine files: ${engine.join(', ')}`);
  const ids = ['udp', 'tcp', 'dot', 'doh', 'doh1', 'doq', 'doh3'].join('|');
  const compare = new RegExp(`\\.id\\s*[!=]==|[!=]==\\s*['"](${ids})['"]|['"](${ids})['"]\\s*[!=]==|case\\s+['"](${ids})['"]`);
  const hits = engine.flatMap((f) => readFileSync(join(ROOT, f), 'utf8').split('\n').map((l, i) => [f, i + 1, l] as const).filter(([, , l]) => compare.test(l)));
  assert.deepEqual(hits.map(([f, i, l]) => `${f}:${i}: ${l.trim()}`), []);
});

/** Source files allowed past 500 lines, and why. */
const OVERSIZED: Record<string, string> = {};

test('no source file over 500 lines unless its reason is stated here', () => {
  const long = files(/\.(ts|mts|mjs|js|go|c|sh|py)$/)
    .map((f) => [f, readFileSync(join(ROOT, f), 'utf8').split('\n').length - 1] as const)
    .filter(([f, n]) => n > 500 && !(f in OVERSIZED));
  assert.deepEqual(long.map(([f, n]) => `${f}: ${n} lines`), []);
});

/** Runs the pure folder's own type check with `probe` added (or alone when null); tsc's exit code and output. */
function pureCheck(probe: string | null): { code: number | null; out: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dnscost-pure-'));
  try {
    const include = [join(ROOT, 'common', '*.ts')];
    if (probe !== null) {
      writeFileSync(join(dir, 'probe.ts'), probe);
      include.push(join(dir, 'probe.ts'));
    }
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(ROOT, 'common', 'tsconfig.json'), include, exclude: [join(ROOT, 'common', '*.test.ts')] }));
    const r = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 });
    return { code: r.status, out: r.stdout + r.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the pure folder type-checks without DOM or node types, and that check fails on a DOM or node: use', () => {
  const tree = pureCheck(null);
  assert.equal(tree.code, 0, tree.out);
  const dom = pureCheck(`export const title = document.title;\n`);
  assert.notEqual(dom.code, 0);
  assert.match(dom.out, /Cannot find name 'document'/);
  const node = pureCheck(`import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n`);
  assert.notEqual(node.code, 0);
  assert.match(node.out, /Cannot find module 'node:fs'/);
  const timer = pureCheck(`export const later = setTimeout;\n`);
  assert.notEqual(timer.code, 0, 'setTimeout is a host API, not the language');
});

test('READMEs a newcomer reads in minutes: README.md ≤ 200 lines, each component\'s ≤ 250, no line over 120 characters', () => {
  // Results files (bench/results/) are records of runs, not READMEs to read first.
  const readmes = files(/^README\.md$/).filter((f) => !f.startsWith('bench/results/'));
  for (const c of ['native-host', 'extension', 'collector', 'lab', 'bench']) assert.ok(readmes.includes(`${c}/README.md`), `${c}/README.md exists`);
  const lines = (f: string) => readFileSync(join(ROOT, f), 'utf8').replace(/\n$/, '').split('\n');
  assert.ok(lines('README.md').length <= 200, `README.md: ${lines('README.md').length} lines`);
  const long = readmes.filter((f) => f !== 'README.md' && lines(f).length > 250).map((f) => `${f}: ${lines(f).length} lines`);
  assert.deepEqual(long, []);
  const wide = readmes.flatMap((f) => lines(f).flatMap((l, i) => ([...l].length > 120 ? [`${f}:${i + 1}: ${[...l].length} characters`] : [])));
  assert.deepEqual(wide, []);
});

test('the README layout table names every top-level folder, and every folder it names exists', () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Layout'));
  assert.ok(section.startsWith('## Layout'), 'README has a Layout section');
  const named = [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!.replace(/\/$/, ''));
  for (const n of named) assert.ok(existsSync(join(ROOT, n)), `README names ${n}, which does not exist`);
  const top = readdirSync(ROOT, { withFileTypes: true }).filter((e) => e.isDirectory() && !e.name.startsWith('.') && !SKIP.has(e.name)).map((e) => e.name);
  for (const t of top) assert.ok(named.some((n) => n === t || n.startsWith(`${t}/`)), `README's layout table does not name ${t}/`);
});

/** The packages `file` imports by name (not node: built-ins), e.g. `valibot`, `@electric-sql/pglite`. */
function packagesOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const info = ts.preProcessFile(text, true, true);
  // A package whose files are served rather than imported (the collector serves uPlot) is resolved by require.resolve.
  const resolved = [...text.matchAll(/require\.resolve\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
  return [...info.importedFiles.map((f) => f.fileName), ...resolved]
    .filter((n) => !n.startsWith('.') && !n.startsWith('node:'))
    .map((n) => (n.startsWith('@') ? n.split('/').slice(0, 2).join('/') : n.split('/')[0]!));
}

/** Every source file `entry` reaches through relative imports (tests left out). */
function reach(entry: string): string[] {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f) || f.includes('.test.')) continue;
    seen.add(f);
    todo.push(...(GRAPH.get(f) ?? importsOf(f)));
  }
  return [...seen];
}

test('dependencies by who needs them: the host and the collector each declare exactly the packages their code imports', () => {
  const pkg = (dir: string) => JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { version: string; dependencies?: Record<string, string> };
  const root = pkg('.');
  const builtins = new Set(['typescript']);
  for (const [dir, entries] of [['native-host', ['native-host/src/main.ts']], ['collector', ['collector/main.ts']]] as const) {
    const own = pkg(dir);
    assert.equal(own.version, root.version, `${dir}/package.json has the checkout's version`);
    const used = [...new Set(entries.flatMap(reach).flatMap(packagesOf))].filter((p) => !builtins.has(p)).sort();
    assert.deepEqual(Object.keys(own.dependencies ?? {}).sort(), used, `${dir}/package.json dependencies`);
  }
  assert.equal((JSON.parse(readFileSync(join(ROOT, 'manifest.json'), 'utf8')) as { version: string }).version, root.version, 'the extension has the same version');
});
