import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

/** Screenshots of the tests, kept as artifacts (gitignored). */
export const ARTIFACTS_DIRECTORY = fileURLToPath(new URL('../../../../test-artifacts/dashboard/', import.meta.url));

export interface Chromium {
  readonly browser: Browser;
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Debian's chromium, headless, with a fresh profile (never a downloaded browser). A machine
 * without it fails the suite with what to do, rather than skipping the page's tests.
 */
export async function launchChromium(): Promise<Chromium> {
  const executablePath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (!existsSync(executablePath)) {
    throw new Error(
      `the live page's tests need Chromium at ${executablePath} (CHROMIUM_PATH): run scripts/test-prerequisites.sh, ` +
        `or install Debian's package (apt-get install -y chromium)`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'dashboard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    viewport: { width: 1280, height: 1600 },
  });
  return {
    browser: context.browser()!,
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface WatchedPage {
  readonly page: Page;
  readonly errors: string[];
  readonly requests: string[];
}

/** A new tab that records its console errors, uncaught exceptions and every request URL. */
export async function watchedPage(chromium: Chromium): Promise<WatchedPage> {
  const page = await chromium.context.newPage();
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(`${error.name}: ${error.message}`));
  page.on('request', (request) => requests.push(request.url()));
  return { page, errors, requests };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS_DIRECTORY, { recursive: true });
  const path = join(ARTIFACTS_DIRECTORY, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** The number an element of the page shows (its text content as a number). */
export const numberIn = (page: Page, id: string): Promise<number> => page.locator(`#${id}`).textContent().then((text) => Number(text));

/** Waits until the page's update counter reaches `count`. */
export async function waitForUpdates(page: Page, count: number, timeout = 20_000): Promise<void> {
  await page.waitForFunction((target) => Number(document.getElementById('update-count')?.textContent) >= target, count, { timeout });
}
