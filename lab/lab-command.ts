// `dnscost-host lab` (which runs this file from a checkout: `node dist/lab/lab-command.js [--json] [--demo]`): starts
// the local lab resolver (CoreDNS serving the generated test zone on loopback) and prints its endpoints and a
// ready-to-run measure command, so anyone can try the tool offline. Stops on Ctrl-C; with --demo it measures the lab
// zone over every transport and stops.
import { fileURLToPath } from 'node:url';
import { runMeasure } from '../native-host/src/cli.js';
import { VERSION } from '../native-host/src/paths.js';
import { startCoreDNS } from './resolver.js';

/** Runs the lab until SIGINT/SIGTERM (or, with --demo, runs one measurement of every transport against it). */
export async function runLab(argv: string[], out = process.stdout): Promise<number> {
  const unknown = argv.find((a) => a !== '--json' && a !== '--demo');
  if (unknown !== undefined) {
    process.stderr.write(`dnscost-host: bad-request: lab: unknown argument ${JSON.stringify(unknown)}\nusage: dnscost-host lab [--json] [--demo]\n`);
    return 2;
  }
  const json = argv.includes('--json');
  const lab = await startCoreDNS();
  const e = lab.endpoints;
  if (json) {
    out.write(JSON.stringify({ version: VERSION, endpoints: e, ca: lab.certs.caFile, connect: `dns.test=${lab.address}` }) + '\n');
  } else {
    out.write(`dnscost lab resolver (CoreDNS) on ${lab.address}, zone "test." (h0.test … h299.test, c3.test, big.test, …)\n`);
    for (const [k, v] of Object.entries(e)) if (v) out.write(`  ${k.padEnd(5)} ${v}\n`);
    out.write(`  CA    ${lab.certs.caFile}\n\nTry:\n`);
    out.write(
      `  npx dnscost-host measure --endpoint ${e.udp} --endpoint ${e.tcp} --endpoint ${e.dot} --endpoint ${e.doh} \\\n` +
        `    --connect dns.test=${lab.address} --ca ${lab.certs.caFile} --mode cold,warm --repeat 10 h1.test h2.test\n\nCtrl-C stops the lab.\n`,
    );
  }
  if (argv.includes('--demo')) {
    // The README's main command: a measurement of the lab zone over every transport, cold and warm, then stop.
    const code = await runMeasure(
      [
        ...[e.udp, e.tcp, e.dot, e.doh].flatMap((u) => ['--endpoint', u]),
        '--connect', `dns.test=${lab.address}`, '--ca', lab.certs.caFile,
        '--mode', 'cold,warm', '--repeat', '10', '--qtype', 'A,AAAA', '--prime',
        ...Array.from({ length: 10 }, (_, i) => `h${i}.test`),
      ],
      out,
    );
    const h1 = await runMeasure(
      ['--endpoint', e.doh, '--http1.1', '--connect', `dns.test=${lab.address}`, '--ca', lab.certs.caFile, '--mode', 'cold,warm', '--repeat', '10', '--quiet', 'h1.test'],
      out,
    );
    await lab.stop();
    return code || h1;
  }
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await lab.stop();
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = await runLab(process.argv.slice(2));
