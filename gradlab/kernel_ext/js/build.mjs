// Bundles src/*.js into single ES modules in ../static/, the files anywidget loads (committed:
// installing or testing gradlab needs no npm). Run `npm ci && npm run build` after changing
// src/ or the versions in package-lock.json.
import { build } from "esbuild";

const banner = {
  "editor": "// gradlab's %%grad code editor, built from gradlab/kernel_ext/js/src/editor.js by " +
            "build.mjs.\n// Includes CodeMirror 6 and Lezer (MIT license, " +
            "https://codemirror.net, https://lezer.codemirror.net).",
  "keeper": "// gradlab's panel keeper, built from gradlab/kernel_ext/js/src/keeper.js by build.mjs.",
};

for (const name of Object.keys(banner)) {
  await build({
    entryPoints: [`src/${name}.js`],
    outfile: `../static/${name}.js`,
    bundle: true,
    format: "esm",
    minify: true,
    target: "es2020",
    legalComments: "none",
    banner: { js: banner[name] },
    logLevel: "warning",
  });
}
