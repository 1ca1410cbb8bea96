// How extension modules are found and compiled inside the bridge process.
//
// * pi's own package names (@earendil-works/pi-*, the legacy @mariozechner/* names, typebox and
//   @sinclair/typebox) resolve to the bridge's small modules in ./shims, as pi maps them to its
//   own copies: every extension shares one set of classes and registries.
// * TypeScript is compiled by Node's built-in stripper (node:module stripTypeScriptTypes, Node
//   >= 22.13), also under node_modules, where Node's automatic stripping refuses to run: npm
//   packages of pi extensions ship .ts sources. The output is cached on disk, keyed by path,
//   size and modification time, so a warm start never loads the stripper at all.
// * TypeScript's module conventions Node does not follow are tried after a failed resolution:
//   "./x.js" written for ./x.ts, extensionless relative imports, folder imports with index.ts.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { registerHooks } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SHIMS = new URL("./shims/", import.meta.url);

const SHIM_FILES = {
  "@earendil-works/pi-coding-agent": "coding-agent.mjs",
  "@earendil-works/pi-agent-core": "agent-core.mjs",
  "@earendil-works/pi-ai": "ai.mjs",
  "@earendil-works/pi-ai/compat": "ai.mjs",
  "@earendil-works/pi-ai/models": "ai.mjs",
  "@earendil-works/pi-ai/oauth": "ai.mjs",
  "@earendil-works/pi-ai/providers/all": "ai.mjs",
  "@earendil-works/pi-tui": "tui.mjs",
  typebox: "typebox.mjs",
  "typebox/value": "typebox-value.mjs",
  "typebox/compile": "typebox-compile.mjs",
};

function shimFor(specifier) {
  let name = specifier;
  if (name.startsWith("@mariozechner/")) name = "@earendil-works/" + name.slice("@mariozechner/".length);
  if (name.startsWith("@sinclair/typebox")) name = "typebox" + name.slice("@sinclair/typebox".length);
  const file = SHIM_FILES[name];
  return file ? new URL(file, SHIMS).href : undefined;
}

const TS_FILE = /\.(ts|mts|cts)$/;
const RELATIVE = /^(\.{1,2}\/|\/|file:)/;

function alternatives(specifier) {
  if (specifier.endsWith(".js")) return [specifier.slice(0, -3) + ".ts"];
  if (specifier.endsWith(".mjs")) return [specifier.slice(0, -4) + ".mts"];
  if (specifier.endsWith(".cjs")) return [specifier.slice(0, -4) + ".cts"];
  if (/\.[a-z]+$/i.test(path.basename(specifier))) return [];
  return [specifier + ".ts", specifier + ".js", specifier + "/index.ts", specifier + "/index.js"];
}

function resolve(specifier, context, nextResolve) {
  const shim = shimFor(specifier);
  if (shim) return { url: shim, shortCircuit: true };
  try {
    return nextResolve(specifier, context);
  } catch (error) {
    if (!RELATIVE.test(specifier) || !context.parentURL) throw error;
    for (const candidate of alternatives(specifier)) {
      try {
        return nextResolve(candidate, context);
      } catch {
        // try the next spelling
      }
    }
    throw error;
  }
}

// --- TypeScript -----------------------------------------------------------------------------

let stripper;
function stripper_() {
  // Loaded on first use only: the stripper (a WebAssembly build of swc) costs ~100 ms to start.
  stripper ??= process.getBuiltinModule("node:module").stripTypeScriptTypes;
  return stripper;
}

const cacheDir = process.env.PI_TS_BRIDGE_CACHE || "";

function compile(file) {
  const stat = statSync(file);
  const key = createHash("sha1")
    .update(`${file}\0${stat.size}\0${stat.mtimeMs}\0${process.version}\0v1`)
    .digest("hex");
  const cached = cacheDir ? path.join(cacheDir, key + ".js") : "";
  if (cached) {
    try {
      return readFileSync(cached, "utf8");
    } catch {
      // not compiled yet
    }
  }
  const source = readFileSync(file, "utf8");
  let output;
  try {
    try {
      // Strip mode keeps every line and column where it was: stack traces point into the .ts file.
      output = stripper_()(source, { mode: "strip" });
    } catch (error) {
      if (error?.code !== "ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX") throw error;
      output = stripper_()(source, { mode: "transform" }); // enums, namespaces, parameter properties
    }
  } catch (error) {
    // the stripper's error names no file; its stack starts with ":<line>"
    const line = /^:(\d+)/.exec(String(error?.stack ?? ""))?.[1];
    throw new SyntaxError(`${file}${line ? `:${line}` : ""}: ${error?.message ?? error}`);
  }
  if (cached) {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const temporary = `${cached}.${process.pid}.tmp`;
      writeFileSync(temporary, output);
      renameSync(temporary, cached);
    } catch {
      // a read-only cache only costs time
    }
  }
  return output;
}

const packageTypes = new Map();

function packageType(directory) {
  if (packageTypes.has(directory)) return packageTypes.get(directory);
  let type;
  try {
    const data = JSON.parse(readFileSync(path.join(directory, "package.json"), "utf8"));
    type = typeof data.type === "string" ? data.type : null;
  } catch {
    const parent = path.dirname(directory);
    type = parent === directory ? null : packageType(parent);
  }
  packageTypes.set(directory, type);
  return type;
}

const ESM_SYNTAX = /(^|[\n;])\s*(import\s*[\w*{"']|export\s|export\{|export\*)|\bimport\.meta\b|\bawait\s+import\b/;

function formatOf(file, code) {
  if (file.endsWith(".mts")) return "module";
  if (file.endsWith(".cts")) return "commonjs";
  const declared = packageType(path.dirname(file));
  if (declared === "module" || declared === "commonjs") return declared;
  return ESM_SYNTAX.test(code) ? "module" : "commonjs";
}

function load(url, context, nextLoad) {
  if (url.startsWith("file:") && TS_FILE.test(url.split("?")[0]) && !url.endsWith(".d.ts")) {
    const file = fileURLToPath(url);
    const code = compile(file);
    return { format: formatOf(file, code), source: code, shortCircuit: true };
  }
  return nextLoad(url, context);
}

registerHooks({ resolve, load });
