// Formatting for json.hpp. Doubles use %.9g: enough for nanoseconds in
// seconds, and free of locale (ftsim never calls setlocale).
#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace btl_ft::sim {

std::string json_quote(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

void json_object::key(std::string_view name) {
    if (!body_.empty()) {
        body_ += ',';
    }
    body_ += json_quote(name);
    body_ += ':';
}

json_object& json_object::add(std::string_view name, std::string_view value) {
    key(name);
    body_ += json_quote(value);
    return *this;
}

json_object& json_object::add(std::string_view name, std::uint64_t value) {
    key(name);
    body_ += std::to_string(value);
    return *this;
}

json_object& json_object::add(std::string_view name, std::int64_t value) {
    key(name);
    body_ += std::to_string(value);
    return *this;
}

json_object& json_object::add(std::string_view name, double value) {
    if (!std::isfinite(value)) {
        return add_null(name);
    }
    key(name);
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", value);
    body_ += text;
    return *this;
}

json_object& json_object::add(std::string_view name, bool value) {
    key(name);
    body_ += value ? "true" : "false";
    return *this;
}

json_object& json_object::add_null(std::string_view name) {
    key(name);
    body_ += "null";
    return *this;
}

json_object& json_object::add(std::string_view name, const json_object& nested) {
    key(name);
    body_ += nested.str();
    return *this;
}

json_object& json_object::add_raw(std::string_view name, std::string_view json) {
    key(name);
    body_ += json;
    return *this;
}

}  // namespace btl_ft::sim
