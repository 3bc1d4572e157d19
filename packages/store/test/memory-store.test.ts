import { memoryStore } from '../src/index.js';
import { describeStoreConformance } from '../src/testing.js';

describeStoreConformance('memory', () => memoryStore());
