(function(){
function key(cell){var v=cell?cell.getAttribute('data-sort'):null;if(v===null||v==='')return null;
 var n=Number(v);return isNaN(n)?v.toLowerCase():n;}
function sortBy(table,column,th){
 var dir=th.getAttribute('aria-sort')==='descending'?'ascending':(th.getAttribute('aria-sort')==='ascending'?'descending':th.getAttribute('data-first')||'descending');
 table.querySelectorAll('thead th').forEach(function(o){o.setAttribute('aria-sort','none');});
 th.setAttribute('aria-sort',dir);
 table.querySelectorAll('tbody').forEach(function(body){
  var rows=Array.prototype.slice.call(body.querySelectorAll('tr')).filter(function(r){return !r.classList.contains('group-head');});
  rows.sort(function(a,b){var x=key(a.children[column]),y=key(b.children[column]);
   if(x===null&&y===null)return 0;if(x===null)return 1;if(y===null)return -1;
   var c=(typeof x==='number'&&typeof y==='number')?x-y:String(x).localeCompare(String(y));
   return dir==='ascending'?c:-c;});
  rows.forEach(function(r){body.appendChild(r);});
 });
}
document.querySelectorAll('table.board').forEach(function(table){
 table.querySelectorAll('thead th').forEach(function(th,column){
  var b=th.querySelector('button');if(b)b.addEventListener('click',function(){sortBy(table,column,th);});
 });
});
})();
