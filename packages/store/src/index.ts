/** `@baton/store`: the Store contract and the in-memory store. The conformance suite is in `@baton/store/testing`. */
export { MemoryStore, memoryStore } from './memory-store.js';
export {
  cursorPosition,
  type EventRow,
  eventRowsOf,
  type InstanceRow,
  instanceOfRow,
  ROW_EVENTS_MAX,
  scheduleAfterFiring,
} from './rows.js';
export {
  type CallControl,
  type CallFilter,
  type CallPage,
  type ClaimedCall,
  DEFAULT_PAGE_SIZE,
  type DeliveryCountFilter,
  type DeliveryFilter,
  type NoticeTopic,
  type NotificationCountFilter,
  type NotificationFilter,
  type NotificationHold,
  type QueueDepth,
  type SessionEvent,
  type Store,
  type StoreCallFiles,
  type StoreDeliveries,
  type StoreInstances,
  type StoreNotice,
  type StoreNotices,
  type StoreNotifications,
  type StoreReads,
  type StoreRetention,
  type StoreSchedules,
  type StoreWrite,
  type StoreWrites,
} from './store.js';
export { asStoreError, withStoreErrors } from './store-errors.js';
