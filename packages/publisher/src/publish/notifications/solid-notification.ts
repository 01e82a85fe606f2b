import { sseFrame } from '../../render/sse-frame.js';

const contexts = ['https://www.w3.org/ns/activitystreams', 'https://www.w3.org/ns/solid/notification/v1'];

/** What a notification says about one element of a stream. */
export interface NotificationSubject {
  /** The topic: a stream IRI or its `/latest`. */
  readonly topic: string;
  readonly kind: 'stream' | 'latest';
  /** The element's IRI (`{stream}/elements/{epoch}-{seq}`). */
  readonly elementIri: string;
  /** The element's id, `{epoch}-{seq}`: the notification's `state`. */
  readonly elementId: string;
  readonly generatedAt: Date;
}

/**
 * The Activity Streams notification of a new element (Solid Notifications Protocol, §
 * notification data model). For a stream topic it is an `Add`, as a Solid server announces a
 * resource added to a container: `object` is the element, `target` the stream. For a `/latest`
 * topic it is an `Update` whose `object` is `/latest`, and `target` names the element it now
 * serves. `state` is the element id in both: a receiver sends it back as `state` when it
 * subscribes again.
 */
export function notificationObject(subject: NotificationSubject): Record<string, string | string[]> {
  const stream = subject.kind === 'stream';
  return {
    '@context': contexts,
    id: `urn:rdf-stream:notification:${stream ? 'add' : 'update'}:${subject.elementIri}`,
    type: stream ? 'Add' : 'Update',
    object: stream ? subject.elementIri : subject.topic,
    target: stream ? subject.topic : subject.elementIri,
    state: subject.elementId,
    published: subject.generatedAt.toISOString(),
  };
}

/** The notification as one SSE `message` event whose `id:` is the state, so a reconnection resumes from it. */
export const notificationFrame = (subject: NotificationSubject): Buffer =>
  Buffer.from(sseFrame({ id: subject.elementId, data: JSON.stringify(notificationObject(subject)) }));
