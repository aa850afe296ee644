// The field kinds of the configuration reader (reader.h): strings, absolute paths,
// booleans, integers in a range, byte sizes with units, words of a fixed list, lists of
// scalars, lists of maps and nested maps (each read by their own Table), and Custom for
// anything else; plus the scalar readers they are made of, for Custom and hooks.
#ifndef BLKBENCH_COMMON_CONFIG_FIELDS_H_
#define BLKBENCH_COMMON_CONFIG_FIELDS_H_

#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/config/reader.h"
#include "common/yaml/yaml.h"

namespace blkbench::config {

// ---- Readers of one scalar (report and return nullopt on a bad value) ----

enum class Empty { kRefused, kAllowed };
std::optional<std::string> ReadString(const yaml::Node& value, std::string_view expected,
                                      Empty empty, Context& context);
std::optional<std::string> ReadPath(const yaml::Node& value, std::string_view expected,
                                    Context& context);
std::optional<bool> ReadBool(const yaml::Node& value, std::string_view expected, Context& context);
std::optional<int64_t> ReadInt(const yaml::Node& value, std::string_view expected, int64_t min,
                               int64_t max, Context& context);
std::optional<uint64_t> ReadUint(const yaml::Node& value, std::string_view expected, uint64_t min,
                                 uint64_t max, Context& context);
// Sizes with fio's units (common/units.h ParseSize): 4096, 512k, 1G.
std::optional<uint64_t> ReadBytes(const yaml::Node& value, std::string_view expected, uint64_t min,
                                  uint64_t max, Context& context);
// One of `words`, with did-you-mean.
std::optional<std::string> ReadWord(const yaml::Node& value, const std::vector<std::string>& words,
                                    Context& context);
// "auto, kvm or tcg".
std::string WordList(const std::vector<std::string>& words);

// ---- Fields ----

// clang-tidy misses the moves of name and expected into the dependent Field<T>.
template <typename T, typename R>
// NOLINTNEXTLINE(performance-unnecessary-value-param)
Field<T> MakeField(std::string name, std::string expected, R read) {
  return Field<T>{.name = std::move(name),
                  .expected = std::move(expected),
                  .required = false,
                  .read = std::move(read),
                  .check = nullptr};
}

// A field whose value `read_value(node, context)` returns as an optional (nullopt after
// reporting a bad one), stored into `member`.
template <typename T, typename V, typename R>
Field<T> ScalarField(std::string name, std::string expected, V T::*member, R read_value) {
  return MakeField<T>(
      std::move(name), std::move(expected),
      [member, read_value = std::move(read_value)](const yaml::Node& v, T& out, Context& c) {
        auto value = read_value(v, c);
        if (!value.has_value()) return false;
        out.*member = static_cast<V>(*std::move(value));
        return true;
      });
}

// A non-empty string (or any string with Empty::kAllowed).
template <typename T>
Field<T> String(std::string name, std::string expected, std::string T::*member,
                Empty empty = Empty::kRefused) {
  std::string what = expected;
  return ScalarField(std::move(name), std::move(expected), member,
                     [what = std::move(what), empty](const yaml::Node& v, Context& c) {
                       return ReadString(v, what, empty, c);
                     });
}

// An absolute path.
template <typename T>
Field<T> Path(std::string name, std::string expected, std::string T::*member) {
  std::string what = expected;
  return ScalarField(
      std::move(name), std::move(expected), member,
      [what = std::move(what)](const yaml::Node& v, Context& c) { return ReadPath(v, what, c); });
}

// true or false (also 1 or 0).
template <typename T>
Field<T> Bool(std::string name, std::string expected, bool T::*member) {
  std::string what = expected;
  return ScalarField(
      std::move(name), std::move(expected), member,
      [what = std::move(what)](const yaml::Node& v, Context& c) { return ReadBool(v, what, c); });
}

// A decimal integer in [min, max].
template <typename T, std::integral V>
Field<T> Int(std::string name, std::string expected, V T::*member, std::type_identity_t<V> min,
             std::type_identity_t<V> max = std::numeric_limits<V>::max()) {
  std::string what = expected;
  return ScalarField(std::move(name), std::move(expected), member,
                     [what = std::move(what), min, max](const yaml::Node& v, Context& c) {
                       if constexpr (std::is_signed_v<V>) {
                         return ReadInt(v, what, min, max, c);
                       } else {
                         return ReadUint(v, what, min, max, c);
                       }
                     });
}

// A byte count with units (1G, 512M, 4096) in [min, max].
template <typename T>
Field<T> Bytes(std::string name, std::string expected, uint64_t T::*member, uint64_t min,
               uint64_t max = std::numeric_limits<uint64_t>::max()) {
  std::string what = expected;
  return ScalarField(std::move(name), std::move(expected), member,
                     [what = std::move(what), min, max](const yaml::Node& v, Context& c) {
                       return ReadBytes(v, what, min, max, c);
                     });
}

// One word of a fixed list; expected reads "auto, kvm or tcg".
template <typename T>
Field<T> Enum(std::string name, std::string T::*member, std::vector<std::string> words) {
  std::string expected = WordList(words);
  return ScalarField(std::move(name), std::move(expected), member,
                     [words = std::move(words)](const yaml::Node& v, Context& c) {
                       return ReadWord(v, words, c);
                     });
}

// A list of scalars, each `item_expected` and passing `item_check` (if any). The list
// replaces the member's default (so `[]` empties it).
template <typename T>
Field<T> ScalarList(std::string name, std::string expected, std::vector<std::string> T::*member,
                    std::string item_expected, Check item_check = nullptr) {
  std::string what = expected;
  return MakeField<T>(
      std::move(name), std::move(expected),
      [what = std::move(what), member, item_expected = std::move(item_expected),
       item_check = std::move(item_check)](const yaml::Node& v, T& out, Context& c) {
        if (!v.IsSequence()) {
          c.Expected(v, what);
          return false;
        }
        std::vector<std::string> items;
        for (size_t i = 0; i < v.size(); ++i) {
          Context::Scope scope = c.Index(i, v[i]);
          std::optional<std::string> s = ReadString(v[i], item_expected, Empty::kRefused, c);
          if (!s) continue;
          if (item_check) {
            if (absl::Status st = item_check(*s); !st.ok()) {
              c.Expected(v[i], item_expected, st.message());
              continue;
            }
          }
          items.push_back(*std::move(s));
        }
        out.*member = std::move(items);
        return false;
      });
}

// Items of a list of maps whose `name` key must differ ("" values are not compared).
template <typename U>
struct UniqueKey {
  std::string name;
  std::string U::*member = nullptr;
};

// Reports the second of two items with the same key value.
void ReportRepeated(const yaml::Node& list, const std::vector<std::string>& values,
                    std::string_view key, Context& context);

// A list of maps, each read by `table` into a default U.
template <typename T, typename U>
Field<T> MapList(std::string name, std::string expected, std::vector<U> T::*member, Table<U> table,
                 UniqueKey<U> unique = {}) {
  std::string what = expected;
  auto items_table = std::make_shared<const Table<U>>(std::move(table));
  return MakeField<T>(std::move(name), std::move(expected),
                      [what = std::move(what), member, items_table = std::move(items_table),
                       unique = std::move(unique)](const yaml::Node& v, T& out, Context& c) {
                        if (!v.IsSequence()) {
                          c.Expected(v, what);
                          return false;
                        }
                        std::vector<U> items;
                        std::vector<std::string> keys;
                        for (size_t i = 0; i < v.size(); ++i) {
                          Context::Scope scope = c.Index(i, v[i]);
                          if (!v[i].IsMap()) {
                            c.Expected(v[i], items_table->expected());
                            keys.emplace_back();
                            continue;
                          }
                          U item;
                          items_table->Read(v[i], item, c);
                          keys.push_back(unique.member ? item.*(unique.member) : "");
                          items.push_back(std::move(item));
                        }
                        if (unique.member) ReportRepeated(v, keys, unique.name, c);
                        out.*member = std::move(items);
                        return false;
                      });
}

// A nested map read by `table`; missing (`key:` alone) reads as an empty map, i.e. the
// member's defaults plus the table's hook.
template <typename T, typename U>
Field<T> Map(std::string name, U T::*member, Table<U> table) {
  auto map_table = std::make_shared<const Table<U>>(std::move(table));
  std::string expected = map_table->expected();
  return MakeField<T>(
      std::move(name), std::move(expected),
      [member, map_table = std::move(map_table)](const yaml::Node& v, T& out, Context& c) {
        map_table->Read(v, out.*member, c);
        return false;
      });
}

// Anything else: `read` reads the value (of any type) and reports through the context.
template <typename T>
Field<T> Custom(std::string name, std::string expected,
                std::function<void(const yaml::Node& value, T& out, Context& context)> read) {
  return MakeField<T>(std::move(name), std::move(expected),
                      [read = std::move(read)](const yaml::Node& v, T& out, Context& c) {
                        read(v, out, c);
                        return false;
                      });
}

}  // namespace blkbench::config

#endif  // BLKBENCH_COMMON_CONFIG_FIELDS_H_
