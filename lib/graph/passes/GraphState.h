// A canonical byte string of a graph's state (structure, types, names, attributes, constant
// contents), for fixpoint(...) groups to tell a fixed point and a cycle apart. Cheaper than the
// printed IR: each constant buffer is hashed once per fingerprinter, not once per snapshot.
#pragma once
#include "strata/graph/Graph.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

namespace strata {

class GraphStateFingerprinter {
public:
  // Two graphs get equal strings exactly when they print the same (up to constant hash
  // collisions), except that op locations are included too.
  std::string fingerprint(const Graph &g);
  // dtype, shape and content hash of a constant; cached per buffer.
  std::string tensorHash(const Tensor &t);

private:
  // Content hashes by (buffer, dtype and shape). Keys are weak pointers ordered by their control
  // block, which outlives the buffer while the key exists: a freed buffer's entry can never be
  // mistaken for a new buffer at the same address, and the cache keeps no tensor alive.
  using Key = std::pair<std::weak_ptr<Buffer>, std::string>;
  struct KeyLess {
    bool operator()(const Key &a, const Key &b) const {
      if (a.first.owner_before(b.first))
        return true;
      if (b.first.owner_before(a.first))
        return false;
      return a.second < b.second;
    }
  };
  std::map<Key, std::string, KeyLess> hashes_;
};

} // namespace strata
