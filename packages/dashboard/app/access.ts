/**
 * Whether the page may change things: true for the operator and a tenant's key, false in a
 * portal opened with a `read` link. Write controls read it and hide (or disable) themselves;
 * the API refuses such writes anyway (403).
 */

import { createContext } from 'preact';

export const CanWrite = createContext(true);

/**
 * Whether the page may add destinations: not with a `read` link, nor with a link narrowed to
 * some destinations (the API creates none for it).
 */
export const CanCreate = createContext(true);
