/** Each service's default CJS_OPS_PORT, as the image's health check assumes it. */
export declare const DEFAULT_OPS_PORTS: Readonly<Record<string, number>>;
