// Opens a `strata explain` report in Chromium (Debian's, driven by playwright-core) and checks
// it as a user would use it: offline (every non-file: request is blocked and fails the test), no
// console errors, every rung of the ladder walked with "step down" and its count matching
// `strata compile --stats`, a kernel's own ladder, a node clicked through to its kernel and
// assembly, the time table and roofline, the memory timeline. Saves screenshots.
//
//   node report_test.js REPORT.html STATS.txt SCREENSHOT_DIR
// STATS.txt: the `key: value` lines of `strata compile MODEL --emit=loop --stats`.
"use strict";
const fs = require("fs");
const path = require("path");
const { chromium } = require("playwright-core");

const [reportPath, statsPath, shotDir] = process.argv.slice(2);
if (!reportPath || !statsPath || !shotDir) {
  console.error("usage: node report_test.js REPORT.html STATS.txt SCREENSHOT_DIR");
  process.exit(2);
}
const stats = Object.fromEntries(fs.readFileSync(statsPath, "utf8").split("\n")
  .map((l) => l.split(": ")).filter((kv) => kv.length === 2).map(([k, v]) => [k.trim(), Number(v)]));
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };
const base = path.basename(reportPath, ".html");

(async () => {
  const browser = await chromium.launch({
    executablePath: process.env.STRATA_CHROMIUM || "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const blocked = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:")) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));

  const t0 = Date.now();
  await page.goto("file://" + path.resolve(reportPath));
  await page.waitForSelector("body[data-ready='1']", { timeout: 30000 });
  const openMs = Date.now() - t0;
  console.log(`${base}: opened in ${openMs} ms`);

  // The whole model's ladder, walked one rung at a time (the graph passes' group expanded).
  if (await page.$("#pass-group")) await page.click("#pass-group");
  const rungs = await page.$$eval("#rung-list li[data-rung]", (lis) => lis.map((li) => ({
    id: li.dataset.rung, count: Number(li.dataset.count), ops: li.dataset.ops === undefined ? null : Number(li.dataset.ops) })));
  const ids = rungs.map((r) => r.id);
  for (const need of ["onnx", "graph", "kernels", "loop", "scheduled", "llvm", "asm"])
    check(ids.includes(need), `rung ${need} is missing (have ${ids.join(", ")})`);
  const byId = Object.fromEntries(rungs.map((r) => [r.id, r]));
  check(byId.graph && byId.graph.count === stats.ops_imported,
    `graph IR rung shows ${byId.graph && byId.graph.count} ops, --stats ops_imported ${stats.ops_imported}`);
  check(byId.kernels && byId.kernels.ops === stats.ops_optimized,
    `fused rung shows ${byId.kernels && byId.kernels.ops} top-level ops, --stats ops_optimized ${stats.ops_optimized}`);
  check(byId.kernels && byId.kernels.count === stats.plan_steps,
    `fused rung shows ${byId.kernels && byId.kernels.count} kernels, --stats plan_steps ${stats.plan_steps}`);
  let walked = 0;
  for (;;) {
    const state = await page.evaluate(() => {
      const on = document.querySelector("#rung-list li.on");
      return { id: on && on.dataset.rung, count: on && Number(on.dataset.count),
        title: document.getElementById("rung-title").textContent,
        shown: Number(document.getElementById("rung-count").textContent),
        text: document.getElementById("rung-text").textContent.length,
        badge: document.querySelector("#rung-badge .badge") !== null,
        possible: document.querySelectorAll("#rung-possible li").length,
        fired: document.querySelectorAll("#rung-fired li").length,
        firedCounts: [...document.querySelectorAll("#rung-fired li.fired")].map((li) => Number((li.textContent.split(" × ")[1] || "0").replace(/,/g, ""))),
        last: document.getElementById("step-down").disabled };
    });
    check(state.id === ids[walked], `step ${walked}: on rung ${state.id}, expected ${ids[walked]}`);
    check(state.shown === state.count, `rung ${state.id}: panel count ${state.shown}, ladder ${state.count}`);
    check(state.text > 0, `rung ${state.id}: no text`);
    check(state.badge, `rung ${state.id}: no portability badge`);
    check(state.possible > 0 && state.fired > 0, `rung ${state.id}: optimizations not shown`);
    if (["scheduled", "asm"].includes(state.id))
      check(state.firedCounts.some((n) => n > 0), `rung ${state.id}: nothing fired (${state.firedCounts})`);
    if (walked === 0) await page.screenshot({ path: path.join(shotDir, `${base}-ladder.png`) });
    if (state.last) break;
    await page.click("#step-down");
    if (++walked > 200) { check(false, "step down never reaches the last rung"); break; }
  }
  check(walked + 1 === ids.length, `walked ${walked + 1} rungs of ${ids.length}`);
  await page.screenshot({ path: path.join(shotDir, `${base}-ladder-asm.png`) });

  // One kernel's ladder: the slowest kernel, down to its assembly.
  const slowest = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById("report-data").textContent);
    let best = 0;
    data.kernels.forEach((k, i) => { if (k.ms > data.kernels[best].ms) best = i; });
    return { index: best, name: data.kernels[best].name };
  });
  await page.selectOption("#scope", String(slowest.index));
  const kernelRungs = await page.$$eval("#rung-list li[data-rung]", (lis) => lis.length);
  check(kernelRungs === 6, `kernel ladder has ${kernelRungs} rungs, expected 6`);
  for (let i = 1; i < kernelRungs; i++) await page.click("#step-down");
  const kernelAsm = await page.textContent("#rung-text");
  check(kernelAsm.includes(slowest.name + ":"), `kernel ${slowest.name}: its assembly has no label ${slowest.name}:`);

  // Provenance: a node that ended up in a kernel, through to that kernel's assembly.
  await page.click("#tab-provenance");
  const node = await page.evaluate(() => {
    const data = JSON.parse(document.getElementById("report-data").textContent);
    const n = data.nodes.find((x) => x.kernels.length && /Conv|MatMul|Gemm/.test(x.op)) || data.nodes.find((x) => x.kernels.length);
    return n && { name: n.name, kernel: data.kernels[n.kernels[0]].name };
  });
  check(node !== undefined && node !== null, "no ONNX node maps to a kernel");
  if (node) {
    await page.click(`.node-row[data-node="${node.name.replace(/"/g, '\\"')}"]`);
    const title = await page.textContent("#kernel-title");
    check(title.startsWith(node.kernel), `clicking ${node.name} shows ${title}, expected ${node.kernel}`);
    await page.click("#kernel-asm-tab");
    const asm = await page.textContent("#kernel-text");
    check(asm.includes(node.kernel + ":"), `${node.kernel}'s assembly is not shown`);
    const back = await page.$$eval("#kernel-nodes a", (as) => as.map((a) => a.textContent));
    check(back.some((t) => t.startsWith(node.name + " ")), `${node.kernel} does not list ${node.name} among its nodes`);
    await page.screenshot({ path: path.join(shotDir, `${base}-provenance.png`) });
  }

  // Where time goes: the table (sortable) and the roofline.
  await page.click("#tab-time");
  const rows = await page.$$eval("#kernel-table tbody tr", (trs) => trs.length);
  check(rows === stats.plan_steps, `time table has ${rows} rows, expected ${stats.plan_steps}`);
  await page.click('#kernel-table th[data-col="6"]');
  const dots = await page.$$eval("#roofline circle.dot", (cs) => cs.length);
  check(dots > 0, "the roofline plot has no kernels");
  await page.screenshot({ path: path.join(shotDir, `${base}-time.png`), fullPage: true });

  // Memory: every plan buffer drawn, the peak marked.
  await page.click("#tab-memory");
  const mem = await page.evaluate(() => ({
    drawn: document.querySelectorAll("#memory-chart rect.buffer").length,
    buffers: JSON.parse(document.getElementById("report-data").textContent).memory.buffers.length,
    peak: document.getElementById("arena-peak") !== null }));
  check(mem.drawn === mem.buffers && mem.buffers > 0, `memory chart draws ${mem.drawn} of ${mem.buffers} buffers`);
  check(mem.peak, "the arena peak is not marked");
  await page.screenshot({ path: path.join(shotDir, `${base}-memory.png`) });

  await page.click("#tab-compile");
  const passRows = await page.$$eval("#pass-times tbody tr", (trs) => trs.length);
  check(passRows > 0, "no pass timings");

  check(blocked.length === 0, `the report requested the network: ${blocked.join(", ")}`);
  check(errors.length === 0, `console errors: ${errors.join(" | ")}`);
  await browser.close();
  if (failures.length) {
    for (const f of failures) console.error(`${base}: FAIL: ${f}`);
    process.exit(1);
  }
  console.log(`${base}: ok (${ids.length} rungs walked, screenshots in ${shotDir})`);
})().catch((e) => { console.error(`${base}: ${e.stack || e}`); process.exit(1); });
