// --help tells the truth: for every command, the overall usage and the command's own help list
// exactly the flags of the parser's table (cli/flag_tables.cpp), each with a line of help, and the
// parser takes every one of them; then the same against the built binary's output and README.md.
// The flags the command line had before the tables are all still there.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/args.hpp"
#include "cli/flags.hpp"
#include "core/util/error.hpp"
#include "tests/cli/cli_run.hpp"

namespace {

using namespace headroom::cli;
using headroom_test::run_cli;
using flag_set = std::set<std::string>;

flag_set table_flags(const command_spec& c) {
  flag_set s;
  for (const auto& f : c.flags) s.insert(std::string(f.name));
  return s;
}

// The "[--flag" items of a synopsis.
flag_set synopsis_flags(const std::string& text) {
  flag_set s;
  const std::regex item(R"(\[(--[a-z0-9-]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), item); it != std::sregex_iterator(); ++it)
    s.insert((*it)[1]);
  return s;
}

// The command's part of the overall usage: from "  headroom NAME " to the next command.
std::string usage_section(const std::string& usage, std::string_view name) {
  const std::string head = "  headroom " + std::string(name) + " ";
  const std::size_t at = usage.find(head);
  if (at == std::string::npos) return "";
  const std::size_t end = usage.find("\n  headroom ", at + head.size());
  return usage.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

// The synopsis of a command's help (before its summary) and the flags of its "flags:" lines, each
// with the help text that follows it (on its line or the next, indented).
std::string help_synopsis(const std::string& help) { return help.substr(0, help.find("\n\n")); }

std::vector<std::pair<std::string, std::string>> help_lines(const std::string& help) {
  std::vector<std::string> lines;
  std::istringstream in(help.substr(help.find("\nflags:\n") + 8));
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("  --", 0) != 0) continue;
    const std::string flag = lines[i].substr(2, lines[i].find(' ', 2) - 2);
    const std::string& l = lines[i];
    const bool same_line = l.size() > 36 && l.compare(34, 2, "  ") == 0 && l[36] != ' ';
    std::string text = same_line ? l.substr(36) : "";
    if (!same_line && i + 1 < lines.size() && lines[i + 1].rfind(std::string(36, ' '), 0) == 0)
      text = lines[i + 1].substr(36);
    out.emplace_back(flag, text);
  }
  return out;
}

flag_set names_of(const std::vector<std::pair<std::string, std::string>>& lines) {
  flag_set s;
  for (const auto& [flag, text] : lines) s.insert(flag);
  return s;
}

// What `headroom CMD --help` must say: the synopsis and one line of help per flag of the table.
void expect_truthful_help(const command_spec& c, const std::string& help) {
  EXPECT_EQ(synopsis_flags(help_synopsis(help)), table_flags(c)) << c.name;
  const auto lines = help_lines(help);
  EXPECT_EQ(names_of(lines), table_flags(c)) << c.name;
  EXPECT_EQ(lines.size(), c.flags.size()) << c.name;
  for (const auto& [flag, text] : lines)
    EXPECT_FALSE(text.empty()) << c.name << " " << flag << " has no help";
}

TEST(Help, EveryFlagOfEveryTableHasItsHelp) {
  for (const auto& c : command_specs()) {
    EXPECT_EQ(table_flags(c).size(), c.flags.size()) << c.name << ": a flag is listed twice";
    for (const auto& f : c.flags) {
      EXPECT_EQ(f.name.rfind("--", 0), 0u) << f.name;
      EXPECT_FALSE(f.help.empty()) << c.name << " " << f.name << " has no help";
      EXPECT_EQ(f.metavar.empty(), f.kind == flag_kind::toggle) << c.name << " " << f.name;
    }
  }
}

TEST(Help, OverallUsageListsExactlyEachTable) {
  const std::string usage = overall_usage();
  for (const auto& c : command_specs())
    EXPECT_EQ(synopsis_flags(usage_section(usage, c.name)), table_flags(c)) << c.name;
}

TEST(Help, CommandHelpListsExactlyItsTable) {
  for (const auto& c : command_specs()) expect_truthful_help(c, command_help(c));
}

TEST(Help, ParserTakesEveryFlagOfItsTableAndNothingElse) {
  for (const auto& c : command_specs()) {
    for (const auto& f : c.flags) {
      std::vector<std::string> args = {"headroom", std::string(c.name), std::string(f.name)};
      if (f.kind != flag_kind::toggle) args.push_back("x");
      std::vector<char*> argv;
      for (auto& s : args) argv.push_back(s.data());
      const parsed_args a = parse(static_cast<int>(argv.size()), argv.data(), c);
      EXPECT_TRUE(f.kind == flag_kind::repeat ? a.all(std::string(f.name)).size() == 1
                                              : a.has(std::string(f.name)))
          << c.name << " " << f.name;
    }
    std::string cmd(c.name), bogus = "--no-such-flag";
    char* argv[] = {cmd.data(), cmd.data(), bogus.data()};
    EXPECT_THROW(parse(3, argv, c), headroom::input_error) << c.name;
  }
}

// Every flag the hand-written usage and the inline lists had before the tables.
TEST(Help, EveryEarlierFlagIsStillAccepted) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> earlier = {
      {"check",
       {"--tp", "--backend", "--policy", "--grouping", "--max-num-seqs", "--target", "--tight", "--json",
        "--seed", "--kv-layout", "--no-hybrid", "--cuda-graph", "--mutant", "--max-model-len",
        "--spec-tokens", "--cudagraph-mode", "--head-tile", "--mamba-block-size",
        "--extra-group-block-size"}},
      {"fuzz",
       {"--seed", "--cases", "--time", "--target", "--policy", "--grouping", "--backend", "--out", "--jobs",
        "--stop-after", "--kv-layout", "--mutant"}},
      {"replay", {"--target", "--json", "--tight", "--violation", "--mutant"}},
      {"plan",
       {"--tp", "--backend", "--policy", "--grouping", "--max-num-seqs", "--json", "--no-hybrid",
        "--cuda-graph", "--mutant", "--max-model-len", "--spec-tokens", "--cudagraph-mode", "--head-tile",
        "--mamba-block-size", "--extra-group-block-size"}},
      {"verify", {"--target", "--json", "--tight"}},
      {"mutants", {"--json"}}};
  for (const auto& [cmd, flags] : earlier)
    for (const auto& f : flags) EXPECT_NE(find_flag(command(cmd), f), nullptr) << cmd << " " << f;
}

// The engine settings are flags of check, plan and fuzz alike (fuzz's pin them), each with the
// same metavar and engine name on all three.
TEST(Help, EngineSettingsAreFlagsOfCheckPlanAndFuzz) {
  const std::vector<std::string> settings = {"--tp",
                                             "--engine-args",
                                             "--max-num-seqs",
                                             "--max-model-len",
                                             "--max-num-batched-tokens",
                                             "--block-size",
                                             "--kv-cache-dtype",
                                             "--dtype",
                                             "--num-speculative-tokens",
                                             "--spec-tokens",
                                             "--cudagraph-mode",
                                             "--cudagraph-capture-sizes",
                                             "--max-cudagraph-capture-size",
                                             "--engine-flavour",
                                             "--head-tile",
                                             "--mamba-block-size",
                                             "--extra-group-block-size"};
  for (const auto& f : settings) {
    const flag_spec* on_check = find_flag(command("check"), f);
    ASSERT_NE(on_check, nullptr) << f;
    for (const char* cmd : {"plan", "fuzz"}) {
      const flag_spec* other = find_flag(command(cmd), f);
      ASSERT_NE(other, nullptr) << cmd << " " << f;
      EXPECT_EQ(other->metavar, on_check->metavar) << cmd << " " << f;
      EXPECT_EQ(other->engine, on_check->engine) << cmd << " " << f;
    }
  }
  EXPECT_EQ(find_flag(command("check"), "--engine-flavour")->metavar, "vllm|sglang|vllm-ascend");
}

TEST(Help, BinaryPrintsTheTables) {
  auto r = run_cli("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, overall_usage());
  for (const auto& c : command_specs()) {
    EXPECT_EQ(synopsis_flags(usage_section(r.out, c.name)), table_flags(c)) << c.name;
    for (const char* h : {" --help", " -h"}) {
      const auto one = run_cli(std::string(c.name) + h);
      EXPECT_EQ(one.code, 0) << c.name;
      EXPECT_EQ(one.out, command_help(c)) << c.name;
      expect_truthful_help(c, one.out);
    }
  }
}

// README.md's "Command line" block is `headroom --help` as it is now.
TEST(Help, ReadmeShowsTheUsage) {
  const std::string readme = headroom_test::slurp(headroom_test::source_path("README.md"));
  EXPECT_NE(readme.find("```\n" + overall_usage() + "```\n"), std::string::npos)
      << "README.md's Command line block differs from headroom --help:\n"
      << overall_usage();
}

TEST(Help, UnknownFlagIsOneLineNamingTheCommandsHelp) {
  const auto r = run_cli("check " + headroom_test::source_path("configs/llama-3-8b.json") + " --bogus");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "headroom: command line: field '--bogus' = (flag): unknown flag; see headroom check --help\n");
}

}  // namespace
