#include <gtest/gtest.h>

#include <string>

#include "jit/sha256.hpp"

namespace fgemm::jit {
namespace {

// Test vectors of FIPS 180-4's examples (NIST, "SHA256.pdf" and "SHA2_Additional.pdf").
TEST(Sha256, MatchesTheStandardsTestVectors) {
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, PiecewiseUpdatesEqualOneUpdate) {
  std::string message;
  for (int i = 0; i < 300; ++i) message += static_cast<char>('!' + i % 90);
  // Pieces that end before, at and across the 56-byte padding limit and the 64-byte block boundary.
  for (std::size_t split : {0, 1, 55, 56, 63, 64, 65, 128, 299}) {
    Sha256 hash;
    hash.update(std::string_view(message).substr(0, split));
    hash.update(std::string_view(message).substr(split));
    EXPECT_EQ(hash.finish(), sha256(message)) << "split at " << split;
  }
}

TEST(Sha256, MessagesDifferingInOneBitHashApart) {
  EXPECT_NE(sha256("fgemm"), sha256("fgemn"));
  EXPECT_NE(sha256(std::string(64, '\0')), sha256(std::string(65, '\0')));
}

}  // namespace
}  // namespace fgemm::jit
