# The layer rule: src/<layer> and tests/<layer> include headers of their own
# layer and of the layers below it only. Run by the layer_includes test:
#   cmake -DSOURCE_DIR=<repo> -DRULES="<layer>=<below>,<below>...|..." -P check_layer_includes.cmake
# RULES comes from parley_layer() in CMakeLists.txt, so that it says what the
# link dependencies say; any folder of src/ counts as a layer.
cmake_minimum_required(VERSION 3.25)

file(GLOB layer_dirs LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR}/src ${SOURCE_DIR}/src/*)
set(layers "")
foreach(d ${layer_dirs})
  if(IS_DIRECTORY ${SOURCE_DIR}/src/${d})
    list(APPEND layers ${d})
  endif()
endforeach()

string(REPLACE "|" ";" rules "${RULES}")
set(checked 0)
set(broken 0)
foreach(rule ${rules})
  string(REGEX MATCH "^([^=]+)=(.*)$" _ "${rule}")
  set(layer ${CMAKE_MATCH_1})
  string(REPLACE "," ";" allowed "${CMAKE_MATCH_2}")
  list(APPEND allowed ${layer})
  file(GLOB_RECURSE files ${SOURCE_DIR}/src/${layer}/*.h ${SOURCE_DIR}/src/${layer}/*.cpp
       ${SOURCE_DIR}/tests/${layer}/*.h ${SOURCE_DIR}/tests/${layer}/*.cpp)
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    file(STRINGS ${f} includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"/]+/")
    foreach(line ${includes})
      string(REGEX MATCH "\"([^\"/]+)/([^\"]*)\"" _ "${line}")
      set(included ${CMAKE_MATCH_1})
      if(included IN_LIST layers AND NOT included IN_LIST allowed)
        file(RELATIVE_PATH rel ${SOURCE_DIR} ${f})
        list(REMOVE_ITEM allowed ${layer})
        list(JOIN allowed " " below)
        message(SEND_ERROR "${rel} includes ${included}/${CMAKE_MATCH_2}: layer ${layer} may include only itself "
                           "and the layers it links (${below}); see parley_layer() in CMakeLists.txt")
        list(APPEND allowed ${layer})
        math(EXPR broken "${broken} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()
if(broken GREATER 0)
  message(FATAL_ERROR "${broken} includes break the layer rule")
endif()
list(JOIN layers " " layer_names)
message(STATUS "layer rule: ${checked} files checked (layers: ${layer_names})")
