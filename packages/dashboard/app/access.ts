/**
 * Whether the page may change things: true for the operator and a tenant's key, false in a
 * portal opened with a `read` link. Write controls read it and hide (or disable) themselves;
 * the API refuses such writes anyway (403).
 */

import { createContext } from 'preact';

export const CanWrite = createContext(true);
