// Machine profile files named by path in a matrix: refused unless the caller reads them,
// read by the CLI's reader only as regular bounded files, and carried in every cell.
#include "workloads/machine_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "workloads/matrix.h"

namespace blkbench::workloads {
namespace {

using ::testing::HasSubstr;

constexpr char kMatrix[] = R"(name: m
job: {rw: randread, runtime: 1s}
matrix:
  machine: [small-vm, lab/a.yaml]
target: {device_class: "sim:ssd"}
)";

TEST(MatrixTest, MachineFilesTravelWithTheMatrixAndArePathsOnlyForTheCli) {
  // Nothing reads paths by default (the controller without attachments, any agent).
  absl::StatusOr<Matrix> refused = ParseMatrix(kMatrix, "m.yaml");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("m.yaml:4:23: key 'machine': 'lab/a.yaml' is a file path"));

  // The controller reads only what the CLI attached.
  absl::StatusOr<Matrix> unattached =
      ParseMatrix(kMatrix, "m.yaml", {.read_machine_file = AttachedMachineFiles({})});
  ASSERT_FALSE(unattached.ok());
  EXPECT_THAT(unattached.status().message(), HasSubstr("was not sent with the matrix"));

  absl::StatusOr<Matrix> m = ParseMatrix(
      kMatrix, "m.yaml", {.read_machine_file = AttachedMachineFiles({{"lab/a.yaml", "name: a"}})});
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_EQ(m->cells.size(), 2u);
  EXPECT_EQ(m->cells[0].target().machine(), "small-vm");
  EXPECT_EQ(m->cells[0].target().machine_profile(), "");
  EXPECT_EQ(m->cells[1].target().machine(), "lab/a.yaml");
  EXPECT_EQ(m->cells[1].target().machine_profile(), "name: a");
  EXPECT_EQ(m->machine_files.size(), 1u);
}

TEST(MatrixTest, AnAttachedFileLargerThanTheBoundIsRefused) {
  absl::StatusOr<Matrix> m = ParseMatrix(
      kMatrix, "m.yaml",
      {.read_machine_file =
           AttachedMachineFiles({{"lab/a.yaml", std::string(kMaxMachineFileBytes + 1, '#')}})});
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("is larger than 65536 bytes"));
}

// The CLI's reader, on what a hostile matrix could name: a FIFO (must not block), a
// device that never ends, a directory, a file too big. Each is refused at once.
TEST(MatrixTest, TheCliReadsOnlyBoundedRegularFiles) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("machine-files-", getpid());
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string big = (dir / "big.yaml").string();
  std::ofstream(big) << std::string(kMaxMachineFileBytes + 1, '#');
  const std::string good = (dir / "good.yaml").string();
  std::ofstream(good) << "name: good\n";

  const auto start = std::chrono::steady_clock::now();
  for (const std::string& path : {fifo, std::string("/dev/zero"), dir.string()}) {
    absl::StatusOr<std::string> text = ReadLocalMachineFile(path);
    EXPECT_FALSE(text.ok()) << path;
    EXPECT_THAT(text.status().message(), HasSubstr("is not a regular file")) << path;
  }
  // Opening the FIFO did not wait for a writer (a generous bound: it takes microseconds).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_THAT(ReadLocalMachineFile(big).status().message(), HasSubstr("at most 65536"));
  EXPECT_EQ(ReadLocalMachineFile((dir / "missing").string()).status().code(),
            absl::StatusCode::kNotFound);
  absl::StatusOr<std::string> ok = ReadLocalMachineFile(good);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, "name: good\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace blkbench::workloads
