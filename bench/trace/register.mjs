import { register } from 'node:module';

register('./instrument.mjs', import.meta.url);
