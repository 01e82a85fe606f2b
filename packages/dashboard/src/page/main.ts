/// <reference lib="dom" />
import { matchStreamPath, streamIri } from '@rdf-stream/protocol';
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
  const path = matchStreamPath(location.pathname.replace(/\/$/, ''));
  try {
    if (path === undefined || path.resource !== undefined) {
      const count = await showCatalogue(main, location.origin);
      status.textContent = `${count} streams.`;
    } else {
      const view = new StreamView(streamIri(location.origin, path.streamId));
      main.replaceChildren(view.element);
      const descriptor = await view.start();
      title.textContent = descriptor.title;
      document.title = `${descriptor.title} — live`;
      status.textContent = `Stream ${path.streamId}: live view. Machines get RDF at this same address.`;
    }
    document.body.dataset['ready'] = 'true';
  } catch (error) {
    status.textContent = `This page could not load: ${error instanceof Error ? error.message : String(error)}`;
  }
}

void main();
