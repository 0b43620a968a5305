/**
 * Generated from the API's OpenAPI document (GET /openapi.json) by openapi-typescript: do not
 * edit. After a change to the API's contract, run `npm run generate:client -w @sluice/api`.
 */

export interface paths {
    "/v1/tenants": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List tenants, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Tenant"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create a tenant; its API key is in this answer only */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TenantWithKey"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a tenant */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Tenant"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /**
         * Delete a tenant: its keys and portal links stop working, its destinations are deleted
         * @description Its keys and portal links are refused at once; its destinations are deleted as `DELETE /v1/destinations/:id` does (undelivered deliveries cancelled). Its events stay until retention removes them.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Change a tenant's name or quotas (the operator's)
         * @description A quota field set to a number is the tenant's own; null: none of its own (the operator-wide default applies). Fields left out stay.
         */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PatchTenantInput"];
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Tenant"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/tenants/{id}/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The tenant's API keys, oldest first (never the keys themselves) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["TenantKeyList"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create another API key for the tenant; the key is in this answer only */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": Record<string, never> | null;
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["CreatedKey"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/tenants/{id}/keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete an API key: refused at once; a tenant keeps at least one */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                    keyId: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List destinations, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Destination"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /** Create a destination; a signing secret is generated unless given */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string | null;
                        url: string;
                        rateLimit: components["schemas"]["RateLimitInput"];
                        maxConcurrency?: number | null;
                        /** @description Default false. */
                        adaptive?: boolean;
                        ordering?: components["schemas"]["OrderingInput"];
                        /** @description The events it gets: exact types, `prefix.*`, or `*` (every type but Sluice's own `sluice.…` operational events, which it gets by naming them or `sluice.*`). */
                        eventTypes?: string[];
                        retry?: components["schemas"]["RetryPolicyInput"];
                        timeoutMs?: number;
                        headers?: {
                            [key: string]: string;
                        } | null;
                        auth?: ({
                            /** @enum {string} */
                            type: "bearer";
                            /** @description Sent as `authorization: Bearer <token>`; never shown again. */
                            token: string;
                        } | {
                            /** @enum {string} */
                            type: "basic";
                            username: string;
                            /** @description Never shown again. */
                            password: string;
                        } | {
                            /** @enum {string} */
                            type: "header";
                            name: string;
                            /** @description Never shown again. */
                            value: string;
                        } | {
                            /** @enum {string} */
                            type: "oauth2_client_credentials";
                            /** @description The authorization server's token endpoint (RFC 6749 §4.4), under the same network rules as the destination's URL. */
                            tokenUrl: string;
                            clientId: string;
                            /** @description Sent by HTTP Basic to tokenUrl; never shown again. */
                            clientSecret: string;
                            scope?: string;
                            audience?: string;
                        }) | null;
                        tls?: {
                            /** @description PEM: the client certificate (intermediates may follow it). */
                            clientCertificate?: string;
                            /** @description PEM: its private key, unencrypted. Stored encrypted; never shown again. */
                            clientKey?: string;
                            /** @description PEM: CA certificates the receiver's certificate may chain to, besides the system's. */
                            ca?: string;
                        } | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        transform?: {
                            /** @description JavaScript defining function handler(webhook): it receives { type, payload, headers } and returns { payload, headers? } or { cancel: true }. */
                            code: string;
                        } | null;
                        secret?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DestinationWithSecret"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get a destination */
        get: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Destination"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a destination; its undelivered deliveries become cancelled */
        delete: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /** Change a destination; a new rateLimit is in force within one tick */
        patch: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string | null;
                        url?: string;
                        rateLimit?: components["schemas"]["RateLimitInput"];
                        maxConcurrency?: number | null;
                        /** @description Adaptive pacing: back off on 429, 503, Retry-After or rising latency, recover toward the limit, never above it. */
                        adaptive?: boolean;
                        ordering?: components["schemas"]["OrderingInput"];
                        /** @description The events it gets: exact types, `prefix.*`, or `*` (every type but Sluice's own `sluice.…` operational events, which it gets by naming them or `sluice.*`). */
                        eventTypes?: string[];
                        retry?: components["schemas"]["RetryPolicyInput"];
                        timeoutMs?: number;
                        /** @description Replaces them all; null: none. */
                        headers?: {
                            [key: string]: string;
                        } | null;
                        auth?: ({
                            /** @enum {string} */
                            type: "bearer";
                            /** @description Sent as `authorization: Bearer <token>`; never shown again. */
                            token: string;
                        } | {
                            /** @enum {string} */
                            type: "basic";
                            username: string;
                            /** @description Never shown again. */
                            password: string;
                        } | {
                            /** @enum {string} */
                            type: "header";
                            name: string;
                            /** @description Never shown again. */
                            value: string;
                        } | {
                            /** @enum {string} */
                            type: "oauth2_client_credentials";
                            /** @description The authorization server's token endpoint (RFC 6749 §4.4), under the same network rules as the destination's URL. */
                            tokenUrl: string;
                            clientId: string;
                            /** @description Sent by HTTP Basic to tokenUrl; never shown again. */
                            clientSecret: string;
                            scope?: string;
                            audience?: string;
                        }) | null;
                        tls?: {
                            /** @description PEM: the client certificate (intermediates may follow it). */
                            clientCertificate?: string;
                            /** @description PEM: its private key, unencrypted. Stored encrypted; never shown again. */
                            clientKey?: string;
                            /** @description PEM: CA certificates the receiver's certificate may chain to, besides the system's. */
                            ca?: string;
                        } | null;
                        filter?: {
                            [key: string]: unknown;
                        } | null;
                        transform?: {
                            /** @description JavaScript defining function handler(webhook): it receives { type, payload, headers } and returns { payload, headers? } or { cancel: true }. */
                            code: string;
                        } | null;
                        secret?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Destination"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/destinations/{id}/pause": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Pause: keep accepting events, deliver nothing until resumed */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Destination"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/resume": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Resume a paused destination, or one disabled by a 410; closes its circuit */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Destination"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/health": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Endpoint health (the circuit breaker) and its latest transitions */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["HealthWithTransitions"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signing secrets: the current one and the rotated-out ones still signing */
        get: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DestinationSecrets"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** New signing secret; the old one keeps signing beside it for 24 h */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["RotatedSecret"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/replay": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Put dead deliveries back to pending, with a fresh attempt budget */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @enum {string} */
                        status: "dead";
                        /**
                         * Format: date-time
                         * @description Only deliveries that died at or after this time.
                         */
                        since?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Count"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Backlog, outcomes and the compliance audit over the last `seconds` */
        get: {
            parameters: {
                query?: {
                    seconds?: number;
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DestinationStats"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Destinations with their backlog and outcomes over the last `seconds`, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                    /** @description The span that `delivered` and `dead` count over. */
                    seconds?: number;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["DestinationOverview"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The tenant's events, newest first, by type, destination or time
         * @description The admin token names the tenant with `tenantId`.
         */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                    /** @description A type, or `prefix.*`: the types that start with `prefix.`; `*`: all. */
                    type?: string;
                    /** @description Only events with a delivery to it. */
                    destinationId?: string;
                    /** @description Only events accepted at or after this time. */
                    since?: string;
                    /** @description Only events accepted at or before this time. */
                    until?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["LoggedEvent"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Accept an event for its destinations (named, or all whose eventTypes match)
         * @description Durable before the answer. The same idempotencyKey again returns the first answer. Past the tenant's quota: 429 rate_limited with Retry-After, nothing accepted.
         */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["NewEventInput"];
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AcceptedEvent"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Accept up to 1,000 events in one transaction: all or nothing
         * @description A batch past the tenant's quota is refused whole: 429 rate_limited with Retry-After.
         */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        events: components["schemas"]["NewEventInput"][];
                    };
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AcceptedEventBatch"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/events/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** An event with its deliveries */
        get: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Event"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/event-types": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The catalog by name, Sluice's own sluice.… types included */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EventTypeList"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Add a type to the catalog
         * @description An event of a type with a schema is validated at ingest. The schema must be a valid JSON Schema and the example must satisfy it (else 400 validation_failed); a name taken: 409 conflict.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CreateEventTypeInput"];
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EventType"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/event-types/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A type of the catalog */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EventType"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /**
         * Remove a type from the catalog
         * @description Its events are then of an unknown type. A built-in type: 409 conflict.
         */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    name: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Deleted */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Change a type's description, schema or example
         * @description Fields left out stay; null removes the schema or the example. The result must hold together (the example satisfies the schema). A built-in type: 409 conflict.
         */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    name: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PatchEventTypeInput"];
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["EventType"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List deliveries, newest first, by destination, event, status or last change */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                    destinationId?: string;
                    eventId?: string;
                    status?: "pending" | "queued" | "delivering" | "delivered" | "dead" | "cancelled";
                    /** @description Only deliveries last changed at or after this time (dead ones: died since). */
                    since?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Delivery"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A delivery with its attempts */
        get: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DeliveryWithAttempts"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/deliveries/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Attempt a dead or pending delivery now, with a fresh attempt budget */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Delivery"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Backlog alerts firing now: a destination whose pending count or age passed its threshold */
        get: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AlertList"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/whoami": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Who this token is: the operator, a tenant's key or a portal link, and its tenant */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Whoami"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/portal-links": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Portal links, newest first (never their tokens); expired ones until pruned */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["PortalLink"][];
                            nextCursor: string | null;
                        };
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        put?: never;
        /**
         * A portal link for a tenant's customer: its token and URL are in this answer only
         * @description The admin token names the tenant with `tenantId` in the body. The token is a v1 bearer token for that tenant only, with the link’s rights, until it expires or is revoked.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["CreatePortalLinkInput"];
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["CreatedPortalLink"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/portal-links/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke a portal link: its token is refused from the next request on, in every API process */
        delete: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Revoked */
                204: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test event to this destination only, through its limiter like any event
         * @description The type defaults to `sluice.test`; without a payload, the type’s catalog example (a built-in type’s with this destination’s ids), else `{"test": true}`. The payload must satisfy the type’s schema.
         */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["TestEventInput"];
                };
            };
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AcceptedEvent"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/destinations/{id}/preview": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** What this destination would send for an event: its filter and transform applied, before signing */
        post: {
            parameters: {
                query?: {
                    /** @description Admin token only: the tenant to act for. */
                    tenantId?: string;
                };
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": components["schemas"]["PreviewRequestInput"];
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Preview"];
                    };
                };
                /** @description Default Response */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Error"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "sluice.destination.disabled": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A destination was disabled: it answered 410 Gone, or an operator disabled it.
         * @description Sent with the header webhook-event-type: sluice.destination.disabled, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.destination.disabled",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "reason": "the destination answered 410 Gone",
                     *         "statusCode": 410
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.destination.disabled";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            reason: string;
                            statusCode?: number;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.destination.suspended": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A destination's circuit breaker opened: its deliveries wait until a probe succeeds.
         * @description Sent with the header webhook-event-type: sluice.destination.suspended, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.destination.suspended",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "reason": "failure_rate",
                     *         "failures": 3,
                     *         "failureRate": 0.75,
                     *         "lastError": "timeout after 60000 ms",
                     *         "nextProbeAt": "2026-01-15T10:31:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.destination.suspended";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            /** @enum {unknown} */
                            reason: "consecutive" | "failure_rate";
                            failures: number;
                            failureRate: number;
                            lastError?: string;
                            /** Format: date-time */
                            nextProbeAt: string;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.destination.certificate_expiring": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A destination's client certificate (tls) stops being valid in less than 14 days: give it a new one.
         * @description Sent with the header webhook-event-type: sluice.destination.certificate_expiring, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.destination.certificate_expiring",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "subject": "CN=sluice-client",
                     *         "notAfter": "2026-01-29T10:30:00.000Z",
                     *         "fingerprint256": "AB:CD:…",
                     *         "daysLeft": 13
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.destination.certificate_expiring";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            subject: string;
                            /** Format: date-time */
                            notAfter: string;
                            fingerprint256: string;
                            daysLeft: number;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.destination.recovered": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A suspended destination's circuit breaker closed again.
         * @description Sent with the header webhook-event-type: sluice.destination.recovered, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.destination.recovered",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "suspendedForMs": 60000
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.destination.recovered";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            suspendedForMs: number;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.delivery.dead": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A delivery's attempts were exhausted: it is dead until replayed or retried.
         * @description Sent with the header webhook-event-type: sluice.delivery.dead, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.delivery.dead",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "deliveryId": "dlv_01jd6xa2c4e6g8j0k2m4n6p8r0",
                     *         "eventId": "evt_01jd6xa1b3d5f7h9k1m3n5q7s9",
                     *         "eventType": "order.paid",
                     *         "attempts": 8,
                     *         "lastStatusCode": 500,
                     *         "lastError": "HTTP 500"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.delivery.dead";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            deliveryId: string;
                            eventId: string;
                            eventType: string;
                            attempts: number;
                            lastStatusCode?: number;
                            lastError?: string;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.backlog.raised": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A backlog alert of one of the tenant's destinations was raised.
         * @description Sent with the header webhook-event-type: sluice.backlog.raised, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.backlog.raised",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "pending": 12000,
                     *         "oldestPendingAgeMs": 95000,
                     *         "threshold": 10000,
                     *         "kind": "pending_count"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.backlog.raised";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            pending: number;
                            oldestPendingAgeMs: number;
                            threshold: number;
                            /** @enum {unknown} */
                            kind?: "pending_count" | "pending_age";
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.backlog.resolved": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A backlog alert of one of the tenant's destinations was resolved.
         * @description Sent with the header webhook-event-type: sluice.backlog.resolved, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.backlog.resolved",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "pending": 40,
                     *         "oldestPendingAgeMs": 95000,
                     *         "threshold": 10000,
                     *         "kind": "pending_count"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.backlog.resolved";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            pending: number;
                            oldestPendingAgeMs: number;
                            threshold: number;
                            /** @enum {unknown} */
                            kind?: "pending_count" | "pending_age";
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.secret.rotated": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A destination's signing secret was rotated; the previous one signs too until it expires.
         * @description Sent with the header webhook-event-type: sluice.secret.rotated, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.secret.rotated",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "previousSecretExpiresAt": "2026-01-16T10:30:00.000Z"
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.secret.rotated";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            /** Format: date-time */
                            previousSecretExpiresAt: string;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "sluice.test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A test event sent to one destination (POST /v1/destinations/:id/test) with no type of its own.
         * @description Sent with the header webhook-event-type: sluice.test, signed as every delivery.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    /**
                     * @example {
                     *       "type": "sluice.test",
                     *       "tenantId": "ten_01jd6x9m0a8d2q5r7t9v1w3y5z",
                     *       "destinationId": "dst_01jd6x9n4b6c8e0g2h4j6k8m0p",
                     *       "occurredAt": "2026-01-15T10:30:00.000Z",
                     *       "data": {
                     *         "test": true
                     *       }
                     *     }
                     */
                    "application/json": {
                        /** @constant */
                        type: "sluice.test";
                        tenantId: string;
                        destinationId: string;
                        /** Format: date-time */
                        occurredAt: string;
                        data: {
                            test?: boolean;
                        };
                    };
                };
            };
            responses: {
                /** @description Any 2xx: received. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description Endpoint health, the circuit breaker of the destination. */
        HealthInput: {
            /**
             * @description healthy; degraded (failures are held, not dead); suspended (one probe at a time).
             * @enum {string}
             */
            state: "healthy" | "degraded" | "suspended";
            /** @description When this state began; null: since creation. */
            since: string | null;
            consecutiveFailures: number;
            /** @description Suspended only: when the next probe may go. */
            nextProbeAt: string | null;
            /** @description connection, dns, timeout, tls or 5xx: the class of the last failure that counted. */
            lastErrorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
            /** @description Suspended only: what opened the circuit: consecutive (failures in a row) or failure_rate (the share of failures over the window). */
            suspendReason: ("consecutive" | "failure_rate") | null;
            /** @description The share of failures that count (timeouts and connection failures included) in the breaker window; null while no window is open. */
            failureRate: number | null;
            /** @description When the client certificate (tls) stops being valid, once that is less than 14 days away; null otherwise. */
            certificateExpiresAt: string | null;
        };
        HealthTransitionInput: {
            /** Format: date-time */
            at: string;
            /** @enum {string} */
            from: "healthy" | "degraded" | "suspended";
            /** @enum {string} */
            to: "healthy" | "degraded" | "suspended";
            /** @enum {string} */
            reason: "failures" | "success" | "operator";
            consecutiveFailures: number;
            errorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
        };
        HealthWithTransitionsInput: {
            /**
             * @description healthy; degraded (failures are held, not dead); suspended (one probe at a time).
             * @enum {string}
             */
            state: "healthy" | "degraded" | "suspended";
            /** @description When this state began; null: since creation. */
            since: string | null;
            consecutiveFailures: number;
            /** @description Suspended only: when the next probe may go. */
            nextProbeAt: string | null;
            /** @description connection, dns, timeout, tls or 5xx: the class of the last failure that counted. */
            lastErrorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
            /** @description Suspended only: what opened the circuit: consecutive (failures in a row) or failure_rate (the share of failures over the window). */
            suspendReason: ("consecutive" | "failure_rate") | null;
            /** @description The share of failures that count (timeouts and connection failures included) in the breaker window; null while no window is open. */
            failureRate: number | null;
            /** @description When the client certificate (tls) stops being valid, once that is less than 14 days away; null otherwise. */
            certificateExpiresAt: string | null;
            /** @description The latest transitions, newest first. */
            transitions: components["schemas"]["HealthTransitionInput"][];
        };
        /** @description The credential: its type and the fields that are not secret. */
        DestinationAuthInput: {
            /** @constant */
            type: "bearer";
        } | {
            /** @constant */
            type: "basic";
            username: string;
        } | {
            /** @constant */
            type: "header";
            name: string;
        } | {
            /** @constant */
            type: "oauth2_client_credentials";
            tokenUrl: string;
            clientId: string;
            scope?: string;
            audience?: string;
        };
        CertificateInput: {
            subject: string;
            issuer: string;
            /** @description ISO 8601: when it stops being valid. */
            notAfter: string;
            fingerprint256: string;
        };
        /** @description The certificates, described; never the key. */
        DestinationTlsInput: {
            clientCertificate?: components["schemas"]["CertificateInput"];
            ca?: components["schemas"]["CertificateInput"];
        };
        EventFilterInput: {
            [key: string]: unknown;
        };
        TransformInput: {
            code: string;
        };
        PreviewRequestInput: {
            type: string;
            payload: unknown;
            /** @description Tried instead of the destination's own (null: none); absent: its own. */
            filter?: {
                [key: string]: unknown;
            } | null;
            /** @description Tried instead of the destination's own (null: none); absent: its own. */
            transform?: {
                /** @description JavaScript defining function handler(webhook): it receives { type, payload, headers } and returns { payload, headers? } or { cancel: true }. */
                code: string;
            } | null;
        };
        PreviewInput: {
            /** @description The event is of its eventTypes and passes its filter. */
            matches: boolean;
            /** @description What would be sent, before signing: the headers (content-type and the destination's own headers as the transform left them; credentials and webhook-* are added at the attempt) and the body. null: nothing would be (no match, a cancel, an error). */
            request: {
                headers: {
                    [key: string]: string;
                };
                body: unknown;
            } | null;
            error: {
                /** @enum {string} */
                code: "transform_failed" | "transform_cancelled";
                message: string;
            } | null;
        };
        ErrorInput: {
            error: {
                /**
                 * @description Stable, machine-readable (docs/api.md "Errors").
                 * @enum {string}
                 */
                code: "validation_failed" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "payload_too_large" | "destination_not_allowed" | "rate_limited" | "request_header_too_large" | "unknown_event_type" | "unavailable" | "internal";
                message: string;
                details: unknown;
            };
        };
        /** @description Most requests in any sliding window of one period (the burst, where one is set). */
        RateLimitInput: {
            limit: number;
            /** @enum {string} */
            period: "second" | "minute" | "hour";
            /** @description A token bucket of this capacity refilled at `limit` per period: up to `burst` requests at once after an idle spell, the long-run rate `limit`. At least `limit`; absent: no burst. */
            burst?: number;
        };
        /**
         * @description `fifo`: first attempts leave one at a time in the order the events were accepted (a failing one is retried later and blocks nothing); `none`: no ordering, concurrency as allowed. Every request carries `webhook-sequence` either way.
         * @enum {string}
         */
        OrderingInput: "none" | "fifo";
        RetryPolicyInput: {
            maxAttempts: number;
            initialDelayMs: number;
            maxDelayMs: number;
        };
        TenantQuotaInput: {
            /** @description Events a second this tenant may post (a second of burst); null: the default. */
            eventsPerSecond: number | null;
            /** @description Most events of this tenant not yet delivered; null: the default. */
            pendingEvents: number | null;
        };
        TenantInput: {
            id: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            quota: components["schemas"]["TenantQuotaInput"];
        };
        PatchTenantInput: {
            name?: string;
            quota?: {
                /** @description Events a second this tenant may post (a second of burst); null: the default. */
                eventsPerSecond?: number | null;
                /** @description Most events of this tenant not yet delivered; null: the default. */
                pendingEvents?: number | null;
            };
        };
        TenantWithKeyInput: {
            id: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            quota: components["schemas"]["TenantQuotaInput"];
            /** @description Shown once; stored only as a hash. */
            apiKey: string;
        };
        DestinationInput: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimitInput"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["OrderingInput"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicyInput"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuthInput"] | null;
            tls: components["schemas"]["DestinationTlsInput"] | null;
            filter: components["schemas"]["EventFilterInput"] | null;
            transform: components["schemas"]["TransformInput"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["HealthInput"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DestinationWithSecretInput: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimitInput"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["OrderingInput"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicyInput"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuthInput"] | null;
            tls: components["schemas"]["DestinationTlsInput"] | null;
            filter: components["schemas"]["EventFilterInput"] | null;
            transform: components["schemas"]["TransformInput"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["HealthInput"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            secret: string;
        };
        RotatedSecretInput: {
            secret: string;
            previousSecretExpiresAt: string | null;
        };
        DestinationSecretsInput: {
            /** @description The current signing secret. */
            secret: string;
            /** @description Rotated-out secrets that still sign beside it, each until its expiresAt. */
            previous: {
                secret: string;
                /** Format: date-time */
                expiresAt: string;
            }[];
        };
        CountInput: {
            count: number;
        };
        DestinationStatsInput: {
            rateLimit: components["schemas"]["RateLimitInput"];
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            pending: number;
            queued: number;
            inFlight: number;
            oldestPendingAgeMs: number;
            delivered: number;
            dead: number;
            /** @description The most requests started in any sliding window of one period (at most the burst where one is set, else the limit). */
            maxSentInAnyWindow: number;
            /** @description With a burst: requests a token bucket of capacity `burst` refilled at `limit` per period would have refused (0 when the long-run rate held); null without a burst. */
            bucketRefusals: number | null;
            /** @description The limit the rate limiter plans with now: the configured one, or lower while adaptive pacing backs off. */
            effectiveLimit: number;
            /** @description Adaptive pacing holds the rate below the limit, or waits out a Retry-After. */
            backingOff: boolean;
            perSecond: {
                /** Format: date-time */
                t: string;
                sent: number;
            }[];
            /** @description The changes of `rateLimit` over the span, oldest first, each with the limit before and after: before the first, its `from` was in force; after the last, `rateLimit`. */
            limitChanges: {
                /** Format: date-time */
                at: string;
                from: components["schemas"]["RateLimitInput"];
                to: components["schemas"]["RateLimitInput"];
            }[];
        };
        BacklogInput: {
            pending: number;
            queued: number;
            inFlight: number;
            /** @description The limit planned with now (adaptive pacing). */
            effectiveLimit: number;
            backingOff: boolean;
            oldestPendingAgeMs: number;
            /** @description Delivered over the span. */
            delivered: number;
            /** @description Died over the span. */
            dead: number;
        };
        DestinationOverviewInput: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimitInput"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["OrderingInput"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicyInput"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuthInput"] | null;
            tls: components["schemas"]["DestinationTlsInput"] | null;
            filter: components["schemas"]["EventFilterInput"] | null;
            transform: components["schemas"]["TransformInput"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["HealthInput"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            stats: components["schemas"]["BacklogInput"];
        };
        NewEventInput: {
            type: string;
            /** @description Any JSON value. */
            payload: unknown;
            destinationId?: string;
            destinationIds?: string[];
            idempotencyKey?: string;
        };
        AcceptedEventInput: {
            id: string;
            deliveries: {
                id: string;
                destinationId: string;
            }[];
        };
        AcceptedEventBatchInput: {
            /** @description One result per event, in order. */
            data: components["schemas"]["AcceptedEventInput"][];
        };
        AttemptInput: {
            id: string;
            attempt: number;
            statusCode: number | null;
            errorCode: string | null;
            error: string | null;
            latencyMs: number;
            responseExcerpt: string | null;
            /** Format: date-time */
            startedAt: string;
            /** Format: date-time */
            finishedAt: string;
        };
        DeliveryInput: {
            id: string;
            eventId: string;
            destinationId: string;
            /** @description The delivery's place in its destination's order, sent as `webhook-sequence`: 1, 2, 3… per destination, no gap, in the order its deliveries are first sent (for a fifo destination, the order their events were accepted). Taken when the delivery is first claimed for sending, kept across retries and replays; null until then. */
            sequence: number | null;
            /** @enum {string} */
            status: "pending" | "queued" | "delivering" | "delivered" | "dead" | "cancelled";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DeliveryWithAttemptsInput: {
            id: string;
            eventId: string;
            destinationId: string;
            /** @description The delivery's place in its destination's order, sent as `webhook-sequence`: 1, 2, 3… per destination, no gap, in the order its deliveries are first sent (for a fifo destination, the order their events were accepted). Taken when the delivery is first claimed for sending, kept across retries and replays; null until then. */
            sequence: number | null;
            /** @enum {string} */
            status: "pending" | "queued" | "delivering" | "delivered" | "dead" | "cancelled";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            attempts: components["schemas"]["AttemptInput"][];
        };
        EventInput: {
            id: string;
            type: string;
            /** @description Any JSON value. */
            payload: unknown;
            idempotencyKey: string | null;
            /** Format: date-time */
            createdAt: string;
            deliveries: components["schemas"]["DeliveryInput"][];
        };
        /** @description A backlog alert that is firing. */
        AlertInput: {
            destinationId: string;
            tenantId: string;
            /**
             * @description pending_count: pending deliveries; pending_age: seconds the oldest due one has waited.
             * @enum {string}
             */
            kind: "pending_count" | "pending_age";
            /** @description The threshold it passed (a count, or seconds). */
            threshold: number;
            /** @description What was observed when it was raised. */
            value: number;
            /** Format: date-time */
            raisedAt: string;
        };
        AlertListInput: {
            data: components["schemas"]["AlertInput"][];
        };
        TenantKeyInput: {
            id: string;
            /** @description The key's first characters, to tell keys apart; null for a key made before they were kept. */
            prefix: string | null;
            /** Format: date-time */
            createdAt: string;
            /** @description When a request last used it, to within a minute; null: never. */
            lastUsedAt: string | null;
        };
        TenantKeyListInput: {
            data: components["schemas"]["TenantKeyInput"][];
        };
        CreatedKeyInput: {
            id: string;
            /** @description Shown once; stored only as a hash. */
            apiKey: string;
        };
        /** @description An event as the event log lists it: without its payload and its deliveries (GET /v1/events/:id has both). */
        LoggedEventInput: {
            id: string;
            type: string;
            /** @description The size of its payload in bytes (the JSON a destination receives, UTF-8). */
            payloadBytes: number;
            idempotencyKey: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        CreateEventTypeInput: {
            /** @description Dotted words of [A-Za-z0-9_-], at most 200 characters, no wildcard; sluice.… is reserved. */
            name: string;
            description: string;
            /** @description A JSON Schema (draft-07, with the formats of ajv-formats) that payloads of this type must satisfy. */
            schema?: {
                [key: string]: unknown;
            };
            /** @description An example payload: satisfies the type's schema. */
            example?: unknown;
        };
        PatchEventTypeInput: {
            description?: string;
            /** @description null removes the schema. */
            schema?: {
                [key: string]: unknown;
            } | null;
            /** @description null removes the example. */
            example?: unknown;
        };
        EventTypeInput: {
            name: string;
            description: string;
            schema: {
                [key: string]: unknown;
            } | null;
            example?: unknown;
            /** @description Sluice's own type (sluice.…): read-only. */
            builtIn: boolean;
            /** @description null for a built-in type. */
            createdAt: string | null;
            updatedAt: string | null;
        };
        EventTypeListInput: {
            data: components["schemas"]["EventTypeInput"][];
            nextCursor: string | null;
        };
        BrandingInput: {
            title?: string;
            accentColor?: string;
            /** @description Loaded by the viewer's browser only; Sluice never fetches it. */
            logoUrl?: string;
        };
        CreatePortalLinkInput: {
            /** @description The admin token names the tenant here. */
            tenantId?: string;
            /**
             * @default manage
             * @enum {string}
             */
            access?: "read" | "manage";
            /** @default 900 */
            expiresInSeconds?: number;
            /** @description Only these destinations (the tenant’s own); absent: all of them. */
            destinationIds?: string[];
            branding?: components["schemas"]["BrandingInput"];
        };
        /** @description A portal link, never its token. */
        PortalLinkInput: {
            id: string;
            tenantId: string;
            /** @enum {string} */
            access: "read" | "manage";
            destinationIds: string[] | null;
            branding: components["schemas"]["BrandingInput"] | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            expiresAt: string;
            expired: boolean;
        };
        CreatedPortalLinkInput: {
            id: string;
            /** @description Opens the portal signed in with the token (in the fragment). */
            url: string;
            /** @description Shown once; stored only as a hash. A v1 bearer token. */
            token: string;
            /** Format: date-time */
            expiresAt: string;
        };
        WhoamiInput: {
            /** @enum {string} */
            role: "admin" | "tenant" | "portal";
            tenant: {
                id: string;
                name: string;
            } | null;
            portal: {
                id: string;
                /** @enum {string} */
                access: "read" | "manage";
                destinationIds: string[] | null;
                branding: components["schemas"]["BrandingInput"] | null;
                /** Format: date-time */
                expiresAt: string;
            } | null;
        };
        TestEventInput: {
            /** @description Default `sluice.test`. */
            type?: string;
            /** @description Any JSON value. */
            payload?: unknown;
        } | null;
        /** @description Endpoint health, the circuit breaker of the destination. */
        Health: {
            /**
             * @description healthy; degraded (failures are held, not dead); suspended (one probe at a time).
             * @enum {string}
             */
            state: "healthy" | "degraded" | "suspended";
            /** @description When this state began; null: since creation. */
            since: string | null;
            consecutiveFailures: number;
            /** @description Suspended only: when the next probe may go. */
            nextProbeAt: string | null;
            /** @description connection, dns, timeout, tls or 5xx: the class of the last failure that counted. */
            lastErrorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
            /** @description Suspended only: what opened the circuit: consecutive (failures in a row) or failure_rate (the share of failures over the window). */
            suspendReason: ("consecutive" | "failure_rate") | null;
            /** @description The share of failures that count (timeouts and connection failures included) in the breaker window; null while no window is open. */
            failureRate: number | null;
            /** @description When the client certificate (tls) stops being valid, once that is less than 14 days away; null otherwise. */
            certificateExpiresAt: string | null;
        };
        HealthTransition: {
            /** Format: date-time */
            at: string;
            /** @enum {string} */
            from: "healthy" | "degraded" | "suspended";
            /** @enum {string} */
            to: "healthy" | "degraded" | "suspended";
            /** @enum {string} */
            reason: "failures" | "success" | "operator";
            consecutiveFailures: number;
            errorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
        };
        HealthWithTransitions: {
            /**
             * @description healthy; degraded (failures are held, not dead); suspended (one probe at a time).
             * @enum {string}
             */
            state: "healthy" | "degraded" | "suspended";
            /** @description When this state began; null: since creation. */
            since: string | null;
            consecutiveFailures: number;
            /** @description Suspended only: when the next probe may go. */
            nextProbeAt: string | null;
            /** @description connection, dns, timeout, tls or 5xx: the class of the last failure that counted. */
            lastErrorClass: ("429" | "ok" | "connection" | "dns" | "timeout" | "tls" | "5xx" | "4xx" | "other") | null;
            /** @description Suspended only: what opened the circuit: consecutive (failures in a row) or failure_rate (the share of failures over the window). */
            suspendReason: ("consecutive" | "failure_rate") | null;
            /** @description The share of failures that count (timeouts and connection failures included) in the breaker window; null while no window is open. */
            failureRate: number | null;
            /** @description When the client certificate (tls) stops being valid, once that is less than 14 days away; null otherwise. */
            certificateExpiresAt: string | null;
            /** @description The latest transitions, newest first. */
            transitions: components["schemas"]["HealthTransition"][];
        };
        /** @description The credential: its type and the fields that are not secret. */
        DestinationAuth: {
            /** @constant */
            type: "bearer";
        } | {
            /** @constant */
            type: "basic";
            username: string;
        } | {
            /** @constant */
            type: "header";
            name: string;
        } | {
            /** @constant */
            type: "oauth2_client_credentials";
            tokenUrl: string;
            clientId: string;
            scope?: string;
            audience?: string;
        };
        Certificate: {
            subject: string;
            issuer: string;
            /** @description ISO 8601: when it stops being valid. */
            notAfter: string;
            fingerprint256: string;
        };
        /** @description The certificates, described; never the key. */
        DestinationTls: {
            clientCertificate?: components["schemas"]["Certificate"];
            ca?: components["schemas"]["Certificate"];
        };
        EventFilter: {
            [key: string]: unknown;
        };
        Transform: {
            code: string;
        };
        PreviewRequest: {
            type: string;
            payload: unknown;
            /** @description Tried instead of the destination's own (null: none); absent: its own. */
            filter?: {
                [key: string]: unknown;
            } | null;
            /** @description Tried instead of the destination's own (null: none); absent: its own. */
            transform?: {
                /** @description JavaScript defining function handler(webhook): it receives { type, payload, headers } and returns { payload, headers? } or { cancel: true }. */
                code: string;
            } | null;
        };
        Preview: {
            /** @description The event is of its eventTypes and passes its filter. */
            matches: boolean;
            /** @description What would be sent, before signing: the headers (content-type and the destination's own headers as the transform left them; credentials and webhook-* are added at the attempt) and the body. null: nothing would be (no match, a cancel, an error). */
            request: {
                headers: {
                    [key: string]: string;
                };
                body: unknown;
            } | null;
            error: {
                /** @enum {string} */
                code: "transform_failed" | "transform_cancelled";
                message: string;
            } | null;
        };
        Error: {
            error: {
                /**
                 * @description Stable, machine-readable (docs/api.md "Errors").
                 * @enum {string}
                 */
                code: "validation_failed" | "unauthorized" | "forbidden" | "not_found" | "conflict" | "payload_too_large" | "destination_not_allowed" | "rate_limited" | "request_header_too_large" | "unknown_event_type" | "unavailable" | "internal";
                message: string;
                details: unknown;
            };
        };
        /** @description Most requests in any sliding window of one period (the burst, where one is set). */
        RateLimit: {
            limit: number;
            /** @enum {string} */
            period: "second" | "minute" | "hour";
            /** @description A token bucket of this capacity refilled at `limit` per period: up to `burst` requests at once after an idle spell, the long-run rate `limit`. At least `limit`; absent: no burst. */
            burst?: number;
        };
        /**
         * @description `fifo`: first attempts leave one at a time in the order the events were accepted (a failing one is retried later and blocks nothing); `none`: no ordering, concurrency as allowed. Every request carries `webhook-sequence` either way.
         * @enum {string}
         */
        Ordering: "none" | "fifo";
        RetryPolicy: {
            maxAttempts: number;
            initialDelayMs: number;
            maxDelayMs: number;
        };
        TenantQuota: {
            /** @description Events a second this tenant may post (a second of burst); null: the default. */
            eventsPerSecond: number | null;
            /** @description Most events of this tenant not yet delivered; null: the default. */
            pendingEvents: number | null;
        };
        Tenant: {
            id: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            quota: components["schemas"]["TenantQuota"];
        };
        PatchTenant: {
            name?: string;
            quota?: {
                /** @description Events a second this tenant may post (a second of burst); null: the default. */
                eventsPerSecond?: number | null;
                /** @description Most events of this tenant not yet delivered; null: the default. */
                pendingEvents?: number | null;
            };
        };
        TenantWithKey: {
            id: string;
            name: string;
            /** Format: date-time */
            createdAt: string;
            quota: components["schemas"]["TenantQuota"];
            /** @description Shown once; stored only as a hash. */
            apiKey: string;
        };
        Destination: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimit"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["Ordering"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicy"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuth"] | null;
            tls: components["schemas"]["DestinationTls"] | null;
            filter: components["schemas"]["EventFilter"] | null;
            transform: components["schemas"]["Transform"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["Health"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DestinationWithSecret: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimit"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["Ordering"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicy"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuth"] | null;
            tls: components["schemas"]["DestinationTls"] | null;
            filter: components["schemas"]["EventFilter"] | null;
            transform: components["schemas"]["Transform"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["Health"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            secret: string;
        };
        RotatedSecret: {
            secret: string;
            previousSecretExpiresAt: string | null;
        };
        DestinationSecrets: {
            /** @description The current signing secret. */
            secret: string;
            /** @description Rotated-out secrets that still sign beside it, each until its expiresAt. */
            previous: {
                secret: string;
                /** Format: date-time */
                expiresAt: string;
            }[];
        };
        Count: {
            count: number;
        };
        DestinationStats: {
            rateLimit: components["schemas"]["RateLimit"];
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            pending: number;
            queued: number;
            inFlight: number;
            oldestPendingAgeMs: number;
            delivered: number;
            dead: number;
            /** @description The most requests started in any sliding window of one period (at most the burst where one is set, else the limit). */
            maxSentInAnyWindow: number;
            /** @description With a burst: requests a token bucket of capacity `burst` refilled at `limit` per period would have refused (0 when the long-run rate held); null without a burst. */
            bucketRefusals: number | null;
            /** @description The limit the rate limiter plans with now: the configured one, or lower while adaptive pacing backs off. */
            effectiveLimit: number;
            /** @description Adaptive pacing holds the rate below the limit, or waits out a Retry-After. */
            backingOff: boolean;
            perSecond: {
                /** Format: date-time */
                t: string;
                sent: number;
            }[];
            /** @description The changes of `rateLimit` over the span, oldest first, each with the limit before and after: before the first, its `from` was in force; after the last, `rateLimit`. */
            limitChanges: {
                /** Format: date-time */
                at: string;
                from: components["schemas"]["RateLimit"];
                to: components["schemas"]["RateLimit"];
            }[];
        };
        Backlog: {
            pending: number;
            queued: number;
            inFlight: number;
            /** @description The limit planned with now (adaptive pacing). */
            effectiveLimit: number;
            backingOff: boolean;
            oldestPendingAgeMs: number;
            /** @description Delivered over the span. */
            delivered: number;
            /** @description Died over the span. */
            dead: number;
        };
        DestinationOverview: {
            id: string;
            tenantId: string;
            name: string | null;
            url: string;
            rateLimit: components["schemas"]["RateLimit"];
            maxConcurrency: number | null;
            adaptive: boolean;
            ordering: components["schemas"]["Ordering"];
            eventTypes: string[];
            retry: components["schemas"]["RetryPolicy"];
            timeoutMs: number;
            headers: {
                [key: string]: string;
            };
            auth: components["schemas"]["DestinationAuth"] | null;
            tls: components["schemas"]["DestinationTls"] | null;
            filter: components["schemas"]["EventFilter"] | null;
            transform: components["schemas"]["Transform"] | null;
            /** @enum {string} */
            state: "active" | "paused" | "disabled";
            disabledReason: string | null;
            health: components["schemas"]["Health"];
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            stats: components["schemas"]["Backlog"];
        };
        NewEvent: {
            type: string;
            /** @description Any JSON value. */
            payload: unknown;
            destinationId?: string;
            destinationIds?: string[];
            idempotencyKey?: string;
        };
        AcceptedEvent: {
            id: string;
            deliveries: {
                id: string;
                destinationId: string;
            }[];
        };
        AcceptedEventBatch: {
            /** @description One result per event, in order. */
            data: components["schemas"]["AcceptedEvent"][];
        };
        Attempt: {
            id: string;
            attempt: number;
            statusCode: number | null;
            errorCode: string | null;
            error: string | null;
            latencyMs: number;
            responseExcerpt: string | null;
            /** Format: date-time */
            startedAt: string;
            /** Format: date-time */
            finishedAt: string;
        };
        Delivery: {
            id: string;
            eventId: string;
            destinationId: string;
            /** @description The delivery's place in its destination's order, sent as `webhook-sequence`: 1, 2, 3… per destination, no gap, in the order its deliveries are first sent (for a fifo destination, the order their events were accepted). Taken when the delivery is first claimed for sending, kept across retries and replays; null until then. */
            sequence: number | null;
            /** @enum {string} */
            status: "pending" | "queued" | "delivering" | "delivered" | "dead" | "cancelled";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
        };
        DeliveryWithAttempts: {
            id: string;
            eventId: string;
            destinationId: string;
            /** @description The delivery's place in its destination's order, sent as `webhook-sequence`: 1, 2, 3… per destination, no gap, in the order its deliveries are first sent (for a fifo destination, the order their events were accepted). Taken when the delivery is first claimed for sending, kept across retries and replays; null until then. */
            sequence: number | null;
            /** @enum {string} */
            status: "pending" | "queued" | "delivering" | "delivered" | "dead" | "cancelled";
            attemptCount: number;
            nextAttemptAt: string | null;
            lastError: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            updatedAt: string;
            attempts: components["schemas"]["Attempt"][];
        };
        Event: {
            id: string;
            type: string;
            /** @description Any JSON value. */
            payload: unknown;
            idempotencyKey: string | null;
            /** Format: date-time */
            createdAt: string;
            deliveries: components["schemas"]["Delivery"][];
        };
        /** @description A backlog alert that is firing. */
        Alert: {
            destinationId: string;
            tenantId: string;
            /**
             * @description pending_count: pending deliveries; pending_age: seconds the oldest due one has waited.
             * @enum {string}
             */
            kind: "pending_count" | "pending_age";
            /** @description The threshold it passed (a count, or seconds). */
            threshold: number;
            /** @description What was observed when it was raised. */
            value: number;
            /** Format: date-time */
            raisedAt: string;
        };
        AlertList: {
            data: components["schemas"]["Alert"][];
        };
        TenantKey: {
            id: string;
            /** @description The key's first characters, to tell keys apart; null for a key made before they were kept. */
            prefix: string | null;
            /** Format: date-time */
            createdAt: string;
            /** @description When a request last used it, to within a minute; null: never. */
            lastUsedAt: string | null;
        };
        TenantKeyList: {
            data: components["schemas"]["TenantKey"][];
        };
        CreatedKey: {
            id: string;
            /** @description Shown once; stored only as a hash. */
            apiKey: string;
        };
        /** @description An event as the event log lists it: without its payload and its deliveries (GET /v1/events/:id has both). */
        LoggedEvent: {
            id: string;
            type: string;
            /** @description The size of its payload in bytes (the JSON a destination receives, UTF-8). */
            payloadBytes: number;
            idempotencyKey: string | null;
            /** Format: date-time */
            createdAt: string;
        };
        CreateEventType: {
            /** @description Dotted words of [A-Za-z0-9_-], at most 200 characters, no wildcard; sluice.… is reserved. */
            name: string;
            description: string;
            /** @description A JSON Schema (draft-07, with the formats of ajv-formats) that payloads of this type must satisfy. */
            schema?: {
                [key: string]: unknown;
            };
            /** @description An example payload: satisfies the type's schema. */
            example?: unknown;
        };
        PatchEventType: {
            description?: string;
            /** @description null removes the schema. */
            schema?: {
                [key: string]: unknown;
            } | null;
            /** @description null removes the example. */
            example?: unknown;
        };
        EventType: {
            name: string;
            description: string;
            schema: {
                [key: string]: unknown;
            } | null;
            example?: unknown;
            /** @description Sluice's own type (sluice.…): read-only. */
            builtIn: boolean;
            /** @description null for a built-in type. */
            createdAt: string | null;
            updatedAt: string | null;
        };
        EventTypeList: {
            data: components["schemas"]["EventType"][];
            nextCursor: string | null;
        };
        Branding: {
            title?: string;
            accentColor?: string;
            /** @description Loaded by the viewer's browser only; Sluice never fetches it. */
            logoUrl?: string;
        };
        CreatePortalLink: {
            /** @description The admin token names the tenant here. */
            tenantId?: string;
            /**
             * @default manage
             * @enum {string}
             */
            access: "read" | "manage";
            /** @default 900 */
            expiresInSeconds: number;
            /** @description Only these destinations (the tenant’s own); absent: all of them. */
            destinationIds?: string[];
            branding?: components["schemas"]["Branding"];
        };
        /** @description A portal link, never its token. */
        PortalLink: {
            id: string;
            tenantId: string;
            /** @enum {string} */
            access: "read" | "manage";
            destinationIds: string[] | null;
            branding: components["schemas"]["Branding"] | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            expiresAt: string;
            expired: boolean;
        };
        CreatedPortalLink: {
            id: string;
            /** @description Opens the portal signed in with the token (in the fragment). */
            url: string;
            /** @description Shown once; stored only as a hash. A v1 bearer token. */
            token: string;
            /** Format: date-time */
            expiresAt: string;
        };
        Whoami: {
            /** @enum {string} */
            role: "admin" | "tenant" | "portal";
            tenant: {
                id: string;
                name: string;
            } | null;
            portal: {
                id: string;
                /** @enum {string} */
                access: "read" | "manage";
                destinationIds: string[] | null;
                branding: components["schemas"]["Branding"] | null;
                /** Format: date-time */
                expiresAt: string;
            } | null;
        };
        TestEvent: {
            /** @description Default `sluice.test`. */
            type?: string;
            /** @description Any JSON value. */
            payload?: unknown;
        } | null;
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
