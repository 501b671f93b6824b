// Bundles the extension's execution contexts (background, popup, options, dashboard) into build/extension-chromium/. Static files
// (HTML, CSS) and the per-browser manifests are written by extension/build.mjs, which also type-checks and packages.
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The webpack configuration for `outDir`. */
export function webpackConfig(outDir) {
  return {
    mode: 'production',
    context: root,
    entry: {
      background: './extension/src/background/index.ts',
      'popup/popup': './extension/src/popup/index.ts',
      'options/options': './extension/src/options/index.ts',
      'dashboard/dashboard': './extension/src/dashboard/index.ts',
      'welcome/welcome': './extension/src/welcome/index.ts',
      'content/page-timing': './extension/src/content/page-timing.ts',
      'ui/static-page': './extension/src/ui/static-page.ts',
    },
    output: { path: outDir, filename: '[name].js', clean: false },
    // Readable bundles with external source maps: MV3 forbids eval (webpack's development devtools use it), and
    // store reviewers read the shipped code.
    devtool: 'source-map',
    optimization: { minimize: false, splitChunks: false, runtimeChunk: false },
    target: ['web', 'es2022'],
    resolve: {
      extensions: ['.ts', '.js'],
      // Sources import './x.js' (NodeNext style, shared with common/): resolve those to the .ts file.
      extensionAlias: { '.js': ['.ts', '.js'] },
    },
    module: {
      rules: [
        {
          test: /\.ts$/,
          loader: 'ts-loader',
          // Type-checking is done once for the whole extension (tsc -p extension/tsconfig.json) before bundling.
          options: { configFile: fileURLToPath(new URL('tsconfig.json', import.meta.url)), transpileOnly: true, compilerOptions: { noEmit: false } },
        },
        {
          // uPlot's stylesheet, emitted as a file beside the dashboard (linked from dashboard.html): no inline styles.
          test: /uPlot\.min\.css$/,
          type: 'asset/resource',
          generator: { filename: 'dashboard/[name][ext]' },
        },
      ],
    },
    performance: { hints: false },
  };
}
