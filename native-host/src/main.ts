// Entry point: picks the command and wires it; logic lives in the named modules, each loaded only when its command
// runs (a host started for `measure` does not load the lab, the installer or the probe: less to start, less memory).
import { CODES, toErrorData } from '../../common/errors.js';
import { VERSION } from './paths.js';

const help = async (): Promise<string> => (await import('./cli.js')).HELP;

/** True when a browser started us: Chromium passes its origin, Firefox the manifest path and the add-on id. */
function launchedByBrowser(argv: string[]): boolean {
  const first = argv[0] ?? '';
  return first.startsWith('chrome-extension://') || (first.endsWith('.json') && argv.length >= 1);
}

async function main(argv: string[]): Promise<number> {
  if (launchedByBrowser(argv) || argv[0] === 'native') {
    // A framing error ends the host with 1 (the browser reports the port closed, and starts a new host on reconnect).
    const { runNative } = await import('./native.js');
    return (await runNative({ input: process.stdin, output: process.stdout })) ? 0 : 1;
  }
  // `dnscost-host COMMAND --help` shows the usage and does nothing else (the lab would start, install would write).
  if (argv.length > 1 && argv.slice(1).some((a) => a === '--help' || a === '-h')) {
    process.stdout.write(await help());
    return 0;
  }
  switch (argv[0]) {
    case 'measure':
      return (await import('./cli.js')).runMeasure(argv.slice(1));
    case 'probe':
      return (await import('./probe/cli.js')).runProbe(argv.slice(1));
    case 'hol':
      return (await import('./hol.js')).runHol(argv.slice(1));
    case 'lab':
      return (await import('./lab-command.js')).runLab(argv.slice(1));
    case 'install':
      return (await import('./install/commands.js')).runInstall(argv.slice(1));
    case 'uninstall':
      return (await import('./install/commands.js')).runUninstall(argv.slice(1));
    case 'doctor':
      return (await import('./install/commands.js')).runDoctor(argv.slice(1));
    case '--version':
    case 'version':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(await help());
      return 0;
    default:
      process.stderr.write(`dnscost-host: unknown command ${JSON.stringify(argv[0])}\n\n${await help()}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Every socket is closed by now; should one linger (a bug), say so and exit rather than hang a script.
    setTimeout(() => {
      process.stderr.write('dnscost-host: a handle was still open 2 s after the command finished; exiting\n');
      process.exit(code);
    }, 2000).unref();
  },
  (err: unknown) => {
    const { code, message } = toErrorData(err);
    process.stderr.write(`dnscost-host: ${code}: ${message}\n`);
    // A mistake in the command line gets the way to the usage; only a bug (internal) gets its stack.
    if (code === CODES.BAD_REQUEST) process.stderr.write('usage: dnscost-host --help\n');
    if (code === CODES.INTERNAL) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
    process.exitCode = 2;
  },
);
