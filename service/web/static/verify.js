// Load an exported game from a file (or this server's export of a finished game) and verify
// it whole in the browser; a tampered file shows which check failed and where.

import { h } from "./api.js";
import { checkExport } from "./exportcheck.js";

const list = document.getElementById("checks");

async function verify(text, source) {
  document.getElementById("source").textContent = source;
  delete document.body.dataset.verdict;
  let checks;
  try {
    checks = await checkExport(JSON.parse(text));
  } catch (error) {
    checks = [{ name: "the file", ok: false, detail: `not an export: ${error.message}` }];
  }
  list.replaceChildren(...checks.map((c) => h("li", { class: c.ok ? "pass" : "fail" },
    h("strong", {}, c.ok ? "\u2713 passed: " : "\u2717 failed: "), c.name, h("br"), h("small", {}, c.detail))));
  document.body.dataset.verdict = checks.every((c) => c.ok) ? "passed" : "failed";
}

document.getElementById("file").addEventListener("change", async (event) => {
  const [file] = event.target.files;
  if (file) await verify(await file.text(), `the file ${file.name}`);
});

const game = new URLSearchParams(location.search).get("game");
if (game && /^[0-9a-f]{16}$/.test(game)) {
  fetch(`/games/${game}/export`, { headers: { Accept: "application/json" } })
    .then(async (response) => {
      if (!response.ok) throw new Error((await response.json()).detail);
      await verify(await response.text(), `this server's export of game ${game}`);
    })
    .catch((error) => { list.replaceChildren(h("li", { class: "fail" }, `Could not fetch the export: ${error.message}`)); });
}
document.body.dataset.ready = "yes";
