# Configure and build fuzz/ as a standalone clang project (run by the
# fuzz_build ctest fixture when the main build uses another compiler).
#   cmake -DSOURCE_DIR=.. -DBINARY_DIR=.. -DCXX=clang++ -DGENERATOR=Ninja -DSECONDS=20 -P build_fuzzers.cmake
foreach(var SOURCE_DIR BINARY_DIR CXX GENERATOR SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_fuzzers.cmake: -D${var}=... is required")
  endif()
endforeach()
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BINARY_DIR} -G ${GENERATOR}
          -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo
          -DLUMINAL_FUZZ_SECONDS=${SECONDS}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the fuzzers with ${CXX} failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BINARY_DIR} -j 2 RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the fuzzers with ${CXX} failed (libFuzzer runtime: "
                      "Debian libclang-rt-14-dev)")
endif()
