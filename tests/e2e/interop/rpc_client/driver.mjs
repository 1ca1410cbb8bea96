// Drives one agent (pi 1.6.0, or pi-host through pi_host_cli.mjs) with pi 1.6.0's own RpcClient,
// imported unchanged from the installed package, and writes what every call gave: its result or
// error and the events seen from its start to the next call's. Usage:
//   node driver.mjs <config.json>
// config: {rpcClient, cliPath, cwd, args, out, missingSession, exportDir}
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { RpcClient } = await import(pathToFileURL(config.rpcClient).href);

const client = new RpcClient({ cliPath: config.cliPath, cwd: config.cwd, args: config.args });
const events = [];
const steps = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForEvent(from, predicate, timeout = 20000) {
	const deadline = Date.now() + timeout;
	while (Date.now() < deadline) {
		if (events.slice(from).some(predicate)) return;
		await sleep(10);
	}
	throw new Error("timed out waiting for an event");
}

// One call of the client: its result (or error) and the events up to the next call. Events
// written just after a response still belong to the call, hence the short pause.
async function call(label, run, pause = 150) {
	const from = events.length;
	const step = { label };
	try {
		step.result = (await run()) ?? null;
	} catch (error) {
		step.error = String(error?.message ?? error).split(". Stderr:")[0];
	}
	await sleep(pause);
	step.events = events.slice(from);
	steps.push(step);
	return step.result;
}

const isDelta = (e) => e.type === "message_update" && e.assistantMessageEvent?.type === "text_delta";

await client.start();
client.onEvent((event) => events.push(event));
try {
	await call("getState", () => client.getState());
	await call("getAvailableModels", () => client.getAvailableModels());
	await call("getAvailableThinkingLevels", () => client.getAvailableThinkingLevels());
	await call("setModel", () => client.setModel("loop", "loop-think"));
	await call("setThinkingLevel", () => client.setThinkingLevel("high"));
	await call("cycleThinkingLevel", () => client.cycleThinkingLevel());
	await call("getAvailableThinkingLevels/think", () => client.getAvailableThinkingLevels());
	await call("cycleModel", () => client.cycleModel());
	await call("cycleModel/back", () => client.cycleModel());
	await call("setThinkingLevel/low", () => client.setThinkingLevel("low"));
	await call("setSteeringMode", () => client.setSteeringMode("all"));
	await call("setFollowUpMode", () => client.setFollowUpMode("one-at-a-time"));
	await call("setAutoRetry", () => client.setAutoRetry(false));
	await call("setAutoCompaction", () => client.setAutoCompaction(false));
	await call("getCommands", () => client.getCommands());
	await call("getLastAssistantText/none", () => client.getLastAssistantText());
	await call("promptAndWait", () => client.promptAndWait("Say hello."));
	await call("promptAndWait/tool", () => client.promptAndWait("Run echo with bash."));

	// a long answer with a follow-up queued while it streams
	let from = events.length;
	await call("prompt/slow", async () => {
		const result = await client.prompt("Tell me a long story.");
		await waitForEvent(from, isDelta);
		return result;
	}, 0);
	await call("followUp", () => client.followUp("Afterwards, say done."), 0);
	await call("waitForIdle", () => client.waitForIdle(30000));

	// a second long answer, aborted, with a steer cleared from the queue first
	from = events.length;
	await call("prompt/to_abort", async () => {
		const result = await client.prompt("Another long story.");
		await waitForEvent(from, isDelta);
		return result;
	}, 0);
	await call("steer", () => client.steer("Steer this way."), 0);
	await call("clearQueue", () => client.clearQueue(), 0);
	await call("abort", () => client.abort(), 300);

	await call("getSessionStats", () => client.getSessionStats());
	await call("getMessages", () => client.getMessages());
	await call("getEntries", () => client.getEntries());
	await call("getTree", () => client.getTree());
	await call("getLastAssistantText", () => client.getLastAssistantText());
	await call("setSessionName", () => client.setSessionName("rpc client run"));
	await call("bash", () => client.bash("printf 'one\\ntwo\\n'"));
	await call("bash/aborted", async () => {
		const running = client.bash("echo started; sleep 20");
		await sleep(500);
		await client.abortBash();
		return await running;
	});
	await call("abortBash/idle", () => client.abortBash());
	await call("abortRetry", () => client.abortRetry());
	await call("exportHtml", () => client.exportHtml());
	await call("exportHtml/path", () => client.exportHtml(`${config.exportDir}/session.html`));
	await call("compact", () => client.compact("Keep it short."));
	await call("getSessionStats/compacted", () => client.getSessionStats());
	const state = await call("getState/before_fork", () => client.getState());
	const forkable = await call("getForkMessages", () => client.getForkMessages());
	await call("fork", () => client.fork(forkable[0].entryId));
	await call("clone/unsaved", () => client.clone());
	await call("newSession", () => client.newSession(state.sessionFile));
	await call("getState/new", () => client.getState());
	await call("switchSession", () => client.switchSession(state.sessionFile));
	await call("getSessionStats/switched", () => client.getSessionStats());
	await call("clone", () => client.clone());
	await call("getState/cloned", () => client.getState());
	await call("switchSession/missing", () => client.switchSession(config.missingSession));
	await call("getState/missing", () => client.getState());
	await call("getMessages/missing", () => client.getMessages());
	await call("collectEvents", async () => {
		const collected = client.collectEvents(20000);
		await client.prompt("One more answer.");
		return (await collected).length > 0;
	});
} finally {
	await client.stop();
	writeFileSync(config.out, JSON.stringify({ steps, stderr: client.getStderr() }));
}
