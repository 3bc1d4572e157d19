/** `@baton/store`: the Store contract and the in-memory store. The conformance suite is in `@baton/store/testing`. */
export { MemoryStore, memoryStore } from './memory-store.js';
export {
  DEFAULT_PAGE_SIZE,
  type CallFilter,
  type CallPage,
  type NotificationFilter,
  type Store,
  type StoreWrite,
} from './store.js';
