// Stands in for pi's dist/cli.js when pi 1.6.0's RpcClient drives pi-host: the client always runs
// `node <cliPath> --mode rpc ...`, so this file hands its arguments and stdio to pi-host's `pi`
// (PI_HOST_PI_BIN) and ends with its exit status.
import { spawn } from "node:child_process";

const child = spawn(process.env.PI_HOST_PI_BIN, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) {
	process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
child.on("error", (error) => {
	process.stderr.write(`cannot start pi-host: ${error.message}\n`);
	process.exit(127);
});
