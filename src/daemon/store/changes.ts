/**
 * Change notices between the nodes of a cluster: after a module commits a write of its durable records, it
 * publishes its topic (the module's name: 'keys', 'combos', 'settings'...); every other node sharing the
 * database hears it and reloads that module's in-memory snapshot from storage. This is how a management
 * write on one node is in effect on all of them within a second while the request path keeps reading
 * snapshots (docs/storage.md, docs/cluster.md).
 *
 * On one machine nothing else writes the database, so the feed is `LOCAL_CHANGES`: publishing is free and
 * nobody is called back.
 */
export interface ChangeFeed {
  /** Tells the other nodes that `topic`'s records changed (call it after the write is committed). */
  publish(topic: string): void;
  /**
   * Calls `fn` when another node published `topic`, and once after the feed reconnects (notices may have
   * been missed meanwhile); returns the unsubscribe. A rejected promise is logged by the feed.
   */
  subscribe(topic: string, fn: () => void | Promise<void>): () => void;
}

/** The feed of a single machine: no other node to tell or hear. */
export const LOCAL_CHANGES: ChangeFeed = {
  publish() {},
  subscribe() {
    return () => {};
  },
};
