// The approval page of `bardo serve` in headless Chromium (Debian's, /usr/bin/chromium), driven by
// playwright-core as a person would: open the one-time link, read the permits, wait for a new one
// to appear live (the test previews it after "ready"), approve the first, decline the second
// with a reason. One JSON object per line on stdout.
//
//   node page_client.mjs LINK SCREENSHOT.png
import { chromium } from "playwright-core";

const [link, screenshot] = process.argv.slice(2);
const emit = (o) => console.log(JSON.stringify(o));

const browser = await chromium.launch({
  executablePath: process.env.BARDO_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  // Without these Chromium reaches for Google's hosts, which this machine's network refuses.
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(link);
  await page.waitForSelector("section.permit");
  const permits = async () =>
    page.$$eval("section.permit", (all) =>
      all.map((s) => ({ id: s.dataset.permit, text: s.innerText, held: s.classList.contains("held") })),
    );
  const first = await permits();
  emit({ step: "loaded", url: page.url(), permits: first, audit: await page.innerText("#audit") });

  // A permit previewed now appears without a reload by hand (the page listens on /operator/events).
  const reloaded = page.waitForEvent("load", { timeout: 30000 });
  emit({ step: "ready" });
  await reloaded;
  await page.waitForSelector("section.permit");
  emit({ step: "live", permits: await permits() });
  if (screenshot) await page.screenshot({ path: screenshot, fullPage: true });

  // Approve the first: the page comes back with it confirmed.
  const [a, b] = first.map((p) => p.id);
  await Promise.all([page.waitForURL("**/operator"), page.click(`section[data-permit="${a}"] button[name=approve]`)]);
  const approved = await page.innerText(`section[data-permit="${a}"] .state`);
  // Decline the second, saying why: it is cancelled and leaves the page.
  await page.fill(`section[data-permit="${b}"] input[name=reason]`, "too large for today");
  await Promise.all([page.waitForURL("**/operator"), page.click(`section[data-permit="${b}"] button[name=decline]`)]);
  const left = (await permits()).map((p) => p.id);
  emit({ step: "acted", approved, left, audit: await page.innerText("#audit") });
} finally {
  await browser.close();
}
