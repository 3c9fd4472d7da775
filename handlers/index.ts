/**
 * Example jobs used by the demo and the README. A worker started with `--jobs handlers/index.ts`
 * (or the built `dist/handlers/index.js`) registers every job exported here.
 */
export { sendWelcomeEmail } from './send-welcome-email.js';
export { resizeImage } from './resize-image.js';
export { chargeInvoice } from './charge-invoice.js';
export { importFile, importRow, importDone } from './import-file.js';
