#include <gtest/gtest.h>

#include <thread>

#include "loadtest/response_reader.h"

using namespace parley::loadtest;

namespace {

std::string chunk(const std::string& content) {
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + content + "\"}}],\"usage\":null}\n\n";
}

}  // namespace

TEST(ResponseReader, TimesStreamedChunksAndReadsUsage) {
  RequestRecord r;
  ResponseReader reader(r, true, Clock::now());
  reader.on_body(200, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n");
  reader.on_body(200, chunk("Once").substr(0, 20));
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  reader.on_body(200, chunk("Once").substr(20) + chunk(" upon"));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  reader.on_body(200, chunk(" a time") + "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\n");
  reader.on_body(200, "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":3,"
                      "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\ndata: [DONE]\n\n");
  reader.finish();
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(reader.text(), "Once upon a time");
  EXPECT_EQ(r.chunks, 3);
  ASSERT_EQ(r.gaps_ms.size(), 2u);
  EXPECT_GE(r.ttft_ms, 5.0);
  EXPECT_GE(r.gaps_ms[1], 20.0);
  EXPECT_GE(r.e2e_ms, r.ttft_ms + r.gaps_ms[0] + r.gaps_ms[1] - 0.01);
  EXPECT_EQ(r.output_tokens, 3);
  EXPECT_EQ(r.prompt_tokens, 12);
  EXPECT_EQ(r.cached_tokens, 8);
}

TEST(ResponseReader, CountsChunksWithoutUsage) {
  RequestRecord r;
  ResponseReader reader(r, false, Clock::now());
  reader.on_body(200, "data: {\"choices\":[{\"text\":\"a\"}]}\n\ndata: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n");
  reader.finish();
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output_tokens, 2);
  EXPECT_EQ(r.prompt_tokens, -1);
}

TEST(ResponseReader, NonStreamedAnswer) {
  RequestRecord r;
  ResponseReader reader(r, true, Clock::now());
  reader.on_body(200, R"({"choices":[{"message":{"role":"assistant","content":"hello"}}],)");
  reader.on_body(200, R"("usage":{"prompt_tokens":4,"completion_tokens":1}})");
  reader.finish();
  EXPECT_TRUE(r.ok()) << r.message;
  EXPECT_EQ(reader.text(), "hello");
  EXPECT_EQ(r.ttft_ms, r.e2e_ms);
  EXPECT_EQ(r.output_tokens, 1);
}

TEST(ResponseReader, Failures) {
  {
    RequestRecord r;
    ResponseReader reader(r, true, Clock::now());
    reader.on_body(404, R"({"error":{"message":"model 'x' not found","type":"invalid_request_error"}})");
    reader.finish();
    EXPECT_EQ(r.error, ErrorKind::Http);
    EXPECT_EQ(r.status, 404u);
    EXPECT_NE(r.message.find("model 'x' not found"), std::string::npos) << r.message;
  }
  {
    RequestRecord r;
    ResponseReader reader(r, true, Clock::now());
    reader.on_body(200, chunk("a"));  // no [DONE]
    reader.finish();
    EXPECT_EQ(r.error, ErrorKind::Protocol);
  }
  {
    RequestRecord r;
    ResponseReader reader(r, true, Clock::now());
    reader.on_body(200, chunk("a") + "data: {\"error\":{\"message\":\"engine failed\"}}\n\ndata: [DONE]\n\n");
    reader.finish();
    EXPECT_EQ(r.error, ErrorKind::Protocol);
    EXPECT_NE(r.message.find("engine failed"), std::string::npos);
  }
  {
    RequestRecord r;
    ResponseReader reader(r, true, Clock::now());
    reader.on_body(200, "data: not json\n\ndata: [DONE]\n\n");
    reader.finish();
    EXPECT_EQ(r.error, ErrorKind::Protocol);
  }
}
