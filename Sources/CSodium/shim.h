// The libsodium API for the CSodium module (pkg-config: libsodium), plus thin
// wrappers that accept NULL for empty buffers: libsodium's own prototypes are
// marked nonnull, which Swift imports as non-optional pointers, while an
// empty Swift array may have no base address.
#ifndef SWEEPER_CSODIUM_SHIM_H
#define SWEEPER_CSODIUM_SHIM_H
#include <sodium.h>

static const unsigned char sweeper_empty_buffer[1] = {0};

static inline const unsigned char *sweeper_nonnull(const unsigned char *p) {
    return p ? p : sweeper_empty_buffer;
}

static inline int sweeper_sign_keypair(unsigned char *pk, unsigned char *sk) {
    return crypto_sign_keypair(pk, sk);
}

static inline int sweeper_sign_seed_keypair(unsigned char *pk, unsigned char *sk, const unsigned char *seed) {
    return crypto_sign_seed_keypair(pk, sk, seed);
}

static inline int sweeper_sign_detached(unsigned char *sig, const unsigned char *m, unsigned long long mlen,
                                        const unsigned char *sk) {
    return crypto_sign_detached(sig, NULL, sweeper_nonnull(m), mlen, sk);
}

static inline int sweeper_sign_verify_detached(const unsigned char *sig, const unsigned char *m,
                                               unsigned long long mlen, const unsigned char *pk) {
    return crypto_sign_verify_detached(sig, sweeper_nonnull(m), mlen, pk);
}

static inline int sweeper_generichash(unsigned char *out, size_t outlen, const unsigned char *in,
                                      unsigned long long inlen, const unsigned char *key, size_t keylen) {
    return crypto_generichash(out, outlen, sweeper_nonnull(in), inlen, keylen ? key : NULL, keylen);
}

static inline void sweeper_memzero(void *p, size_t len) {
    if (p && len) sodium_memzero(p, len);
}

static inline int sweeper_memcmp(const void *a, const void *b, size_t len) {
    if (!len) return 0;
    return sodium_memcmp(a, b, len);
}

static inline void sweeper_randombytes(void *p, size_t len) {
    if (p && len) randombytes_buf(p, len);
}

#endif
