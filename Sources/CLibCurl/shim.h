// libcurl for staffcast's outgoing deliveries (Web Push, webhooks, SMTP). curl_easy_setopt and
// curl_easy_getinfo are variadic, which Swift cannot call: these typed wrappers can.
#include <curl/curl.h>

static inline CURLcode staffcast_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_slist(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode staffcast_curl_set_size(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }

typedef size_t (*staffcast_curl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode staffcast_curl_set_callback(CURL *h, CURLoption o, staffcast_curl_data_callback f) {
    return curl_easy_setopt(h, o, f);
}

static inline long staffcast_curl_response_code(CURL *h) {
    long code = 0;
    if (curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
    return code;
}
