// A minimal JSON object writer for ftsim's one-line results. Numbers are
// printed with a fixed format so a seed reproduces the output byte for byte.
// Rejected: a JSON library dependency for a few flat objects.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace btl_ft::sim {

class json_object {
public:
    json_object& add(std::string_view key, std::string_view value);
    json_object& add(std::string_view key, const char* value) { return add(key, std::string_view(value)); }
    json_object& add(std::string_view key, std::uint64_t value);
    json_object& add(std::string_view key, std::int64_t value);
    json_object& add(std::string_view key, std::uint32_t value) { return add(key, std::uint64_t{value}); }
    json_object& add(std::string_view key, double value);
    json_object& add(std::string_view key, bool value);
    json_object& add_null(std::string_view key);
    json_object& add(std::string_view key, const json_object& nested);
    json_object& add_raw(std::string_view key, std::string_view json);
    std::string str() const { return "{" + body_ + "}"; }

private:
    void key(std::string_view name);
    std::string body_;
};

std::string json_quote(std::string_view text);

}  // namespace btl_ft::sim
