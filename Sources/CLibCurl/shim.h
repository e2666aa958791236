// libcurl for staffcast's outgoing deliveries (Web Push, webhooks, SMTP). curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: these typed wrappers can.
#include <curl/curl.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

static inline CURLcode staffcast_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_size(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }

typedef size_t (*staffcast_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode staffcast_curl_set_callback(CURL *h, CURLoption o, staffcast_curl_data_callback f) {
    return curl_easy_setopt(h, o, f);
}

// Opening the connection: libcurl asks for a socket to the address it resolved, so the address
// is judged here, after every DNS answer (CurlEasy's `publicAddressesOnly`).
typedef curl_socket_t (*staffcast_curl_opensocket_callback)(void *clientp, curlsocktype purpose, struct curl_sockaddr *address);
static inline CURLcode staffcast_curl_set_opensocket(CURL *h, staffcast_curl_opensocket_callback f) {
    return curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, f);
}
static inline curl_socket_t staffcast_curl_socket_bad(void) { return CURL_SOCKET_BAD; }
// The address's bytes in network order into `out` (16 bytes of room): 4 for IPv4, 16 for IPv6,
// 0 for anything else.
static inline int staffcast_curl_address_bytes(const struct curl_sockaddr *a, unsigned char *out) {
    if (a->family == AF_INET && a->addrlen >= sizeof(struct sockaddr_in)) {
        memcpy(out, &((const struct sockaddr_in *)&a->addr)->sin_addr, 4);
        return 4;
    }
    if (a->family == AF_INET6 && a->addrlen >= sizeof(struct sockaddr_in6)) {
        memcpy(out, &((const struct sockaddr_in6 *)&a->addr)->sin6_addr, 16);
        return 16;
    }
    return 0;
}
static inline curl_socket_t staffcast_curl_open_socket(const struct curl_sockaddr *a) {
    return socket(a->family, a->socktype, a->protocol);
}

static inline long staffcast_curl_response_code(CURL *h) {
    long code = 0;
    if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}
