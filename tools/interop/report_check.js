// make check-interop: opens a run's report.html from the file system in headless Chromium with
// every request that is not the file itself (or a data: URI) refused, and checks the page as a
// browser built it: 10 charts, each with a drawn line, every preview image decoded, no request
// leaving the file, no script error; saves a screenshot.   usage: node report_check.js FILE OUT.png
const puppeteer = require("puppeteer-core");
const path = require("path");
(async () => {
  const [file, out] = process.argv.slice(2);
  const url = "file://" + path.resolve(file);
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, args: ["--no-sandbox"],
  });
  const outside = [], errors = [];
  try {
    const page = await browser.newPage();
    await page.setRequestInterception(true);
    page.on("request", (r) => {
      const u = r.url();
      if (u === url || u.startsWith("data:")) r.continue();
      else outside.push(u), r.abort();
    });
    page.on("pageerror", (e) => errors.push(e.message));
    await page.setViewport({ width: 1400, height: 1800, deviceScaleFactor: 1 });
    await page.goto(url, { waitUntil: "load" });
    const got = await page.evaluate(() => ({
      charts: document.querySelectorAll("svg").length,
      drawn: [...document.querySelectorAll("svg")].filter((s) =>
        [...s.querySelectorAll("polyline")].some((p) => p.points.numberOfItems > 0)).length,
      images: document.querySelectorAll("img").length,
      decoded: [...document.querySelectorAll("img")].filter((i) => i.complete && i.naturalWidth > 0).length,
    }));
    await page.screenshot({ path: out, fullPage: true });
    console.log(`report.html in Chromium: ${got.charts} charts (${got.drawn} with a line), ${got.decoded} of ` +
                `${got.images} previews decoded, ${outside.length} requests outside the file, ${errors.length} script errors`);
    const ok = got.charts === 10 && got.drawn === 10 && got.images > 0 && got.decoded === got.images &&
               !outside.length && !errors.length;
    if (!ok) {
      console.log("outside:", outside.join(" "), "errors:", errors.join(" "));
      process.exitCode = 1;
    }
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error("report_check.js:", e.message); process.exit(1); });
