/// <reference lib="dom" />
import './page.css';
import { showCatalogue } from './catalogue-view.js';
import { StreamView } from './stream-view.js';

/**
 * The page is the same for every URL it is served at (`/`, `/streams/{id}`): it reads where
 * it is from the address and talks to the publisher it came from, with the client library.
 */
async function main(): Promise<void> {
  const title = document.getElementById('page-title') as HTMLElement;
  const status = document.getElementById('page-status') as HTMLElement;
  const main = document.getElementById('main') as HTMLElement;
  const match = /^\/streams\/([^/]+)\/?$/.exec(location.pathname);
  try {
    if (match === null) {
      const count = await showCatalogue(main, location.origin);
      status.textContent = `${count} streams.`;
    } else {
      const streamIri = `${location.origin}/streams/${match[1]}`;
      const view = new StreamView(streamIri);
      main.replaceChildren(view.element);
      const descriptor = await view.start();
      title.textContent = descriptor.title;
      document.title = `${descriptor.title} — live`;
      status.textContent = `Stream ${decodeURIComponent(match[1] as string)}: live view. Machines get RDF at this same address.`;
    }
    document.body.dataset['ready'] = 'true';
  } catch (error) {
    status.textContent = `This page could not load: ${error instanceof Error ? error.message : String(error)}`;
  }
}

void main();
