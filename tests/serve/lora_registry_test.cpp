// The server's LoRA adapters by name: loading on first use, the LRU under a
// memory budget that never evicts an adapter a request holds, --lora-dir
// listings, removal, and adapters for another base model refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "model/lora_files.h"
#include "model/mkmodel.h"
#include "serve/adapters/lora_registry.h"
#include "util/error.h"

namespace parley::serve {
namespace {

namespace fs = std::filesystem;

MkModelSpec small_base(int32_t ffn_dim) {
  MkModelSpec s;
  s.dim = 64;
  s.n_layers = 2;
  s.n_heads = 4;
  s.ffn_dim = ffn_dim;
  s.context_length = 128;
  s.vocab_from = PARLEY_SOURCE_DIR "/models/stories260K.gguf";
  return s;
}

// A base model, four adapters of the same size for it in dir/ (a.gguf ..
// d.gguf), a non-adapter file there, and an adapter for a wider base outside.
class LoraRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("parley-lora-registry-" + std::to_string(::getpid()));
    fs::create_directories(root_ / "dir");
    write_random_model(small_base(96), path("base.gguf"));
    for (const char* name : {"a", "b", "c", "d"}) {
      MkAdapterSpec spec;
      spec.seed = uint64_t(name[0]);
      write_random_adapter(path("base.gguf"), spec, path(std::string("dir/") + name + ".gguf"));
    }
    std::ofstream(path("dir/notes.gguf")) << "not a GGUF file";
    write_random_model(small_base(128), path("wider.gguf"));
    MkAdapterSpec spec;
    write_random_adapter(path("wider.gguf"), spec, path("wider-adapter.gguf"));
    base_ = Model::load(path("base.gguf"));
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }
  uint64_t adapter_bytes() const { return LoraAdapter::load(path("dir/a.gguf"), *base_)->bytes(); }

  fs::path root_;
  std::unique_ptr<Model> base_;
};

TEST_F(LoraRegistryTest, LooksUpByNameAndLoadsOnFirstUse) {
  LoraRegistry r(*base_, 0);
  r.add("x", path("dir/a.gguf"), 0.5f, false);
  EXPECT_TRUE(r.contains("x"));
  EXPECT_FALSE(r.contains("y"));
  EXPECT_FALSE(r.acquire("y"));
  EXPECT_FALSE(r.list().at(0).loaded);
  EXPECT_EQ(r.counters().loads, 0u);
  const auto use = r.acquire("x");
  ASSERT_TRUE(use && use->adapter);
  EXPECT_EQ(use->scale, 0.5f);
  EXPECT_EQ(use->adapter->path(), path("dir/a.gguf"));
  EXPECT_EQ(r.acquire("x")->adapter, use->adapter);  // loaded once
  const LoraInfo info = r.list().at(0);
  EXPECT_TRUE(info.loaded);
  EXPECT_EQ(info.requests, 2u);
  EXPECT_EQ(info.bytes, use->adapter->bytes());
  EXPECT_EQ(r.counters().loads, 1u);
  EXPECT_EQ(r.counters().bytes, use->adapter->bytes());
  EXPECT_THROW(r.add("x", path("dir/b.gguf"), 1.0f, false), Error);  // the name is taken
}

TEST_F(LoraRegistryTest, EvictsTheLeastRecentlyUsedOverTheBudget) {
  LoraRegistry r(*base_, 2 * adapter_bytes());  // room for two
  for (const char* name : {"a", "b", "c"}) r.add(name, path(std::string("dir/") + name + ".gguf"), 1.0f, false);
  r.acquire("a");
  r.acquire("b");
  r.acquire("a");  // b is now the least recently used
  r.acquire("c");
  const auto list = r.list();
  EXPECT_TRUE(list[0].loaded);
  EXPECT_FALSE(list[1].loaded);
  EXPECT_TRUE(list[2].loaded);
  EXPECT_EQ(r.counters().evictions, 1u);
  EXPECT_EQ(r.counters().loaded, 2u);
  EXPECT_LE(r.counters().bytes, r.budget());
  EXPECT_TRUE(r.acquire("b")->adapter);  // loaded again, evicting a
  EXPECT_FALSE(r.list()[0].loaded);
  EXPECT_EQ(r.counters().loads, 4u);
}

TEST_F(LoraRegistryTest, NeverEvictsAnAdapterInUse) {
  LoraRegistry r(*base_, adapter_bytes());  // room for one
  for (const char* name : {"a", "b", "c"}) r.add(name, path(std::string("dir/") + name + ".gguf"), 1.0f, false);
  auto held = r.acquire("a");
  auto other = r.acquire("b");  // over the budget while a is held
  ASSERT_TRUE(held && other);
  EXPECT_TRUE(r.list()[0].loaded);
  EXPECT_TRUE(r.list()[1].loaded);
  EXPECT_EQ(r.counters().evictions, 0u);
  EXPECT_EQ(r.remove("a"), LoraRegistry::Removal::InUse);
  EXPECT_EQ(r.remove("b"), LoraRegistry::Removal::InUse);
  EXPECT_EQ(r.remove("z"), LoraRegistry::Removal::Unknown);
  // Released, the excess goes at the next load.
  held.reset();
  other.reset();
  EXPECT_TRUE(r.acquire("c")->adapter);
  EXPECT_EQ(r.counters().evictions, 2u);
  EXPECT_EQ(r.counters().loaded, 1u);
}

TEST_F(LoraRegistryTest, RemovesAnIdleAdapter) {
  LoraRegistry r(*base_, 0);
  r.add("a", path("dir/a.gguf"), 1.0f, true);
  EXPECT_GT(r.counters().bytes, 0u);
  EXPECT_EQ(r.remove("a"), LoraRegistry::Removal::Removed);
  EXPECT_FALSE(r.contains("a"));
  EXPECT_EQ(r.counters().bytes, 0u);
  EXPECT_EQ(r.counters().loaded, 0u);
}

TEST_F(LoraRegistryTest, ListsADirectoryByFileStem) {
  LoraRegistry r(*base_, 0);
  EXPECT_EQ(r.add_dir(path("dir")), 4u);
  std::vector<std::string> names;
  for (const LoraInfo& a : r.list()) {
    names.push_back(a.name);
    EXPECT_FALSE(a.loaded);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(r.list()[2].path, path("dir/c.gguf"));
  EXPECT_TRUE(r.acquire("c")->adapter);
}

std::vector<std::string> names(LoraRegistry& r) {
  std::vector<std::string> out;
  for (const LoraInfo& a : r.list()) out.push_back(a.name);
  return out;
}

TEST_F(LoraRegistryTest, FindsAdapterFilesAddedToTheDirectoryLater) {
  LoraRegistry r(*base_, 0);
  ASSERT_EQ(r.add_dir(path("dir")), 4u);
  fs::copy_file(path("dir/a.gguf"), path("dir/e.gguf"));
  EXPECT_TRUE(r.contains("e"));  // found when named
  EXPECT_TRUE(r.acquire("e")->adapter);
  fs::copy_file(path("dir/b.gguf"), path("dir/f.gguf"));
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "b", "c", "d", "e", "f"}));  // listed before any use
  EXPECT_FALSE(r.list().back().loaded);
  // Only files of the directory, by their stem.
  EXPECT_FALSE(r.acquire("../wider-adapter"));
  EXPECT_FALSE(r.acquire("notes"));
  EXPECT_FALSE(r.acquire("e.gguf"));
}

TEST_F(LoraRegistryTest, ARemovedFileStaysWhileItsAdapterIsLoaded) {
  LoraRegistry r(*base_, adapter_bytes());  // room for one
  r.add_dir(path("dir"));
  ASSERT_TRUE(r.acquire("a"));
  fs::remove(path("dir/a.gguf"));
  fs::remove(path("dir/b.gguf"));
  EXPECT_FALSE(r.contains("b"));  // not loaded: gone with its file
  EXPECT_FALSE(r.acquire("b"));
  EXPECT_TRUE(r.acquire("a")->adapter);  // loaded: it keeps serving
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "c", "d"}));
  EXPECT_TRUE(r.acquire("c")->adapter);  // evicts a
  EXPECT_FALSE(r.acquire("a"));
  EXPECT_EQ(names(r), (std::vector<std::string>{"c", "d"}));
}

TEST_F(LoraRegistryTest, ARemovedDirectoryAdapterStaysWithdrawnUntilAddedAgain) {
  LoraRegistry r(*base_, 0);
  r.add_dir(path("dir"));
  EXPECT_EQ(r.remove("c"), LoraRegistry::Removal::Removed);
  EXPECT_FALSE(r.contains("c"));
  EXPECT_EQ(names(r), (std::vector<std::string>{"a", "b", "d"}));
  r.add("c", path("dir/c.gguf"), 1.0f, false);
  EXPECT_TRUE(r.acquire("c")->adapter);
}

TEST_F(LoraRegistryTest, RefusesAnAdapterForAnotherBase) {
  LoraRegistry r(*base_, 0);
  try {
    r.add("w", path("wider-adapter.gguf"), 1.0f, true);
    FAIL() << "loaded an adapter for another base";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(r.contains("w"));
  r.add("w", path("wider-adapter.gguf"), 1.0f, false);  // offered lazily, it fails at first use
  EXPECT_THROW(r.acquire("w"), Error);
  EXPECT_FALSE(r.list()[0].loaded);
}

}  // namespace
}  // namespace parley::serve
