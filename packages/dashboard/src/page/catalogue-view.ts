import { streamPath } from '@rdf-stream/protocol';
import { formatDuration, h } from './dom.js';
import { readCatalogue, readDescriptor, readHealth } from './rdf-documents.js';

/** `/`: every stream with its title, interval, source kind and health, refreshed every 5 s. */
export async function showCatalogue(main: HTMLElement, origin: string): Promise<number> {
  const streams = await readCatalogue(origin);
  const descriptors = await Promise.all(streams.map((stream) => readDescriptor(stream.iri).catch(() => undefined)));
  const body = h('tbody');
  main.replaceChildren(
    h(
      'table',
      { id: 'catalogue' },
      h('caption', { class: 'muted' }, 'Streams of this publisher; open one to watch it live.'),
      h('thead', {}, h('tr', {}, ...['Stream', 'Title', 'Interval', 'Source', 'Health', 'Latest', 'Last element'].map((name) => h('th', { scope: 'col' }, name)))),
      body,
    ),
  );
  const render = async () => {
    const health = await readHealth(origin).catch(() => ({}) as Awaited<ReturnType<typeof readHealth>>);
    body.replaceChildren(
      ...streams.map((stream, index) => {
        const state = health[stream.id];
        const lastAt = state?.lastElementAt == null ? undefined : Date.parse(state.lastElementAt);
        return h(
          'tr',
          {},
          h('th', { scope: 'row' }, h('a', { href: streamPath(encodeURIComponent(stream.id)) }, stream.id)),
          h('td', {}, stream.title),
          h('td', {}, descriptors[index]?.interval ?? 'irregular'),
          h('td', {}, state?.source.kind ?? '–'),
          h('td', {}, state === undefined ? 'unknown' : state.source.detail === undefined ? state.source.state : `${state.source.state}: ${state.source.detail}`),
          h('td', { class: 'number' }, state?.latestSeq ?? '–'),
          h('td', {}, lastAt === undefined ? 'none yet' : `${formatDuration(Date.now() - lastAt)} ago`),
        );
      }),
    );
  };
  await render();
  setInterval(() => void render(), 5_000);
  return streams.length;
}
