// Bundles src/*.js into single ES modules in ../static/, the files anywidget loads (committed:
// installing or testing gradlab needs no npm). Run `npm ci && npm run build` after changing
// src/ or the versions in package-lock.json.
//
// The bundles carry third-party code (CodeMirror 6, Lezer and their small helpers, all under
// the MIT license), whose license asks that its notice travel with every copy: esbuild's
// metafile says which packages went into a bundle, and their LICENSE files, as the packages
// ship them, are written to ../static/THIRD_PARTY_LICENSES.txt beside it.
import { build } from "esbuild";
import { readFileSync, writeFileSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

const banner = {
  "editor": "// gradlab's %%grad code editor, built from gradlab/kernel_ext/js/src/editor.js by " +
            "build.mjs.\n// Includes CodeMirror 6 and Lezer (MIT license, " +
            "https://codemirror.net, https://lezer.codemirror.net); their license notices are " +
            "in THIRD_PARTY_LICENSES.txt beside this file.",
  "keeper": "// gradlab's panel keeper, built from gradlab/kernel_ext/js/src/keeper.js by build.mjs.",
};

/** The package directory ("node_modules/@scope/name" or "node_modules/name") of a bundled input. */
function packageOf(input) {
  const match = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  return match ? match[1] : null;
}

const bundled = new Set();
for (const name of Object.keys(banner)) {
  const result = await build({
    entryPoints: [`src/${name}.js`],
    outfile: `../static/${name}.js`,
    bundle: true,
    format: "esm",
    minify: true,
    target: "es2020",
    legalComments: "none",
    banner: { js: banner[name] },
    logLevel: "warning",
    metafile: true,
  });
  for (const input of Object.keys(result.metafile.inputs)) {
    const pkg = packageOf(input);
    if (pkg) bundled.add(pkg);
  }
}

const sections = [...bundled].sort().map((pkg) => {
  const dir = join("node_modules", pkg);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
  if (!file || !existsSync(join(dir, file))) {
    throw new Error(`${pkg} is bundled but ships no LICENSE file: add its notice by hand`);
  }
  const text = readFileSync(join(dir, file), "utf8").trim();
  return `${pkg} ${meta.version} (${meta.license})\n${"-".repeat(72)}\n${text}\n`;
});
writeFileSync("../static/THIRD_PARTY_LICENSES.txt",
  "Third-party code bundled into gradlab/kernel_ext/static/*.js by " +
  "gradlab/kernel_ext/js/build.mjs,\nwith the license notice each package ships.\n\n" +
  sections.join("\n"));
